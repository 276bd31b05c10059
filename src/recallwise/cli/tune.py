"""``recallwise tune gate`` and ``recallwise tune validator``: measure wordings, fit thresholds.

Both read labelled data (``builtin:seed`` or your own file), validate all of it before any
decider call, ask every candidate wording about every item (one call per item), and print
per-candidate separation, ranking and calibration figures. ``--report`` draws the picture,
``--write-config`` saves the shipped wording's fitted thresholds for ``RecallPolicy``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..deciders import Decider
from ..errors import RecallwiseError, UsageError
from ..policy.config import FittedThreshold, config_from_env, read_config, write_config
from ..tuning import (
    TuneResult,
    default_candidates,
    load_candidates,
    load_cases,
    load_labels,
    tune_gate,
    tune_validator,
)
from ..tuning.candidates import Role, WordingCandidate
from ..tuning.data import FOLLOW_UP_FILE, GATE_FILE
from . import emit_json, progress_enabled
from .common import add_decider, add_embedder, add_json, decider_from_args, embedder_from_args, table


def register(subparsers: argparse._SubParsersAction) -> None:
    _labelled_messages(
        subparsers,
        "gate",
        "gate",
        help="compare gate wordings on labelled utterances and fit the gate threshold",
        description="Ask every candidate gate wording about every labelled utterance (one decider "
        "call per utterance) and report separation, ranking and calibration per wording.",
        labels="true = answering needs a stored personal fact; builtin:seed and builtin:heldout are "
        "shipped sets",
    )
    _labelled_messages(
        subparsers,
        "follow-up",
        "follow_up",
        help="compare follow-up wordings on labelled messages and fit the follow-up threshold",
        description="Ask every candidate wording of the follow-up question (does this message carry "
        "on the previous request: 'continue', 'what about tomorrow?') about every labelled message, "
        "one decider call per message, and report separation, ranking and calibration per wording.",
        labels="true = carries on the previous request; builtin:dev and builtin:heldout are shipped sets",
    )

    validator = subparsers.add_parser(
        "validator",
        help="compare judge wordings on queries with relevant/irrelevant records",
        description="Ask every candidate judge wording about every record of each query (one call "
        "per query) and report pooled separation and per-query ranking per wording.",
    )
    validator.add_argument(
        "--cases",
        required=True,
        metavar="FILE.json|builtin:NAME",
        help='{"records": {key: text}, "cases": [{"query", "relevant": [keys], "irrelevant": [keys]}]}; '
        "builtin:seed, builtin:dev and builtin:heldout are shipped sets",
    )
    _common(validator, "judge")
    validator.set_defaults(func=run_validator)

    named = subparsers.add_parser(
        "named-gate",
        help="fit the store-aware gate on LoCoMo's dev split",
        description="Fit how far below its threshold the gate may open when the message names "
        "something the actor's memory mentions: LoCoMo dev questions against their conversations' "
        "stores, non-memory messages against every store; chosen by balanced accuracy.",
    )
    named.add_argument(
        "--locomo",
        required=True,
        metavar="DIR",
        help="LoCoMo data directory (README: where LoCoMo comes from)",
    )
    named.add_argument(
        "--split",
        default="dev",
        help="the split to fit on (default %(default)s; dev only: test is for reporting)",
    )
    named.add_argument(
        "--negatives",
        metavar="FILE.jsonl",
        help="gate labels whose false rows are the non-memory messages (default: the shipped bank)",
    )
    add_decider(named)
    add_embedder(named, "the embedded decider (and the LoCoMo stores)")
    named.set_defaults(embedder_for_decider=True)
    add_json(named)
    named.add_argument(
        "--write-config",
        metavar="PATH",
        help="save the fitted threshold for this decider into PATH (merged; default: not saved)",
    )
    named.set_defaults(func=run_named_gate)

    keep = subparsers.add_parser(
        "keep",
        help="fit what the gated arm searches and keeps (depth, conversation re-scoring, keep budget) "
        "on LoCoMo's dev split",
        description="Run LoCoMo dev questions through the embedded policy at several search depths, then "
        "choose the conversation re-scoring weights by evidence recall at --max-records records and the "
        "adaptive keep budget (the fewest records for that recall); prints the fit beside what ships.",
    )
    keep.add_argument(
        "--locomo",
        required=True,
        metavar="DIR",
        help="LoCoMo data directory (README: where LoCoMo comes from)",
    )
    keep.add_argument(
        "--split",
        default="dev",
        help="the split to fit on (default %(default)s; dev only: test is for reporting)",
    )
    keep.add_argument(
        "--depths",
        default=",".join(str(d) for d in _depth_grid()),
        metavar="N,N,...",
        help="search depths (records per namespace) to try (default %(default)s)",
    )
    keep.add_argument(
        "--max-records", type=int, default=5, help="most records kept per question (default %(default)s)"
    )
    keep.add_argument(
        "--recall-tolerance",
        type=float,
        default=0.0,
        help="evidence recall the budget may give up for fewer records (default %(default)s)",
    )
    add_json(keep)
    keep.set_defaults(func=run_keep)


def _labelled_messages(
    subparsers: argparse._SubParsersAction, name: str, role: Role, *, help: str, description: str, labels: str
) -> None:
    """A ``tune`` command asking one yes/no question about labelled messages (gate, follow-up)."""
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.add_argument(
        "--labels",
        required=True,
        metavar="FILE.jsonl|builtin:NAME",
        help='one {"text": str, "label": bool} per line (' + labels + ")",
    )
    _common(parser, role)
    parser.set_defaults(func=run_gate)


def _common(parser: argparse.ArgumentParser, role: Role) -> None:
    parser.add_argument(
        "--candidates",
        metavar="FILE",
        help="YAML or JSON file of named questions (default: the shipped wording and contrasting ones)",
    )
    add_decider(parser)
    add_embedder(parser, "the embedded decider")
    parser.set_defaults(embedder_for_decider=True)
    add_json(parser)
    parser.add_argument(
        "--report",
        metavar="OUT.html",
        help="write a self-contained HTML report with charts (default: no report)",
    )
    parser.add_argument(
        "--write-config",
        metavar="PATH",
        help="save the shipped wording's fitted threshold(s) for this decider into PATH "
        "(merged; default: not saved)",
    )
    parser.set_defaults(role=role)


# ---- running --------------------------------------------------------------------------


def _candidates(args: argparse.Namespace) -> tuple[list[WordingCandidate], str]:
    if args.candidates:
        return load_candidates(args.candidates, args.role)
    candidates = default_candidates(args.role)
    return candidates, candidates[0].name


def _prepare(args: argparse.Namespace) -> tuple[list[WordingCandidate], str, Decider]:
    """Everything that can be checked before the first decider call."""
    candidates, default = _candidates(args)
    data = getattr(args, "labels", None) or getattr(args, "cases", None)
    if args.write_config and data == "builtin:heldout":
        raise UsageError(
            "--write-config with builtin:heldout: the held-out sets are for reporting, and a threshold "
            "fitted on them has nothing left to be checked on; fit on your own data or "
            f"{'builtin:dev' if args.role == 'follow_up' else 'builtin:seed'}"
        )
    if args.write_config and not any(c.is_shipped(args.role) for c in candidates):
        raise UsageError(
            "--write-config fits the threshold of the wording the policy asks; add the shipped "
            "question to the candidates (`use: shipped`)"
        )
    for flag, path in (("--report", args.report), ("--write-config", args.write_config)):
        if path and Path(path).is_dir():
            raise UsageError(f"{flag} {path}: is a directory, expected a file path")
    config_from_env()  # a broken RECALLWISE_CONFIG is reported now, not after the run
    if args.write_config and Path(args.write_config).exists():
        read_config(args.write_config)  # write_config merges into it: a broken one stops us now
    decider = decider_from_args(args)
    if decider is None:
        raise UsageError("tuning needs a decider; 'none' is the ungated stock behaviour")
    return candidates, default, decider


def _progress(args: argparse.Namespace, total: int, unit: str) -> Any:
    if not progress_enabled(args):
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False, desc="asking")


def run_gate(args: argparse.Namespace) -> int:
    """``tune gate`` and ``tune follow-up``: one yes/no question over labelled messages."""
    labels = load_labels(args.labels, FOLLOW_UP_FILE if args.role == "follow_up" else GATE_FILE)
    candidates, default, decider = _prepare(args)
    bar = _progress(args, labels.n, "utterance")
    try:
        result = tune_gate(
            decider, labels, candidates, default=default, progress=bar.update if bar else None, role=args.role
        )
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, result, decider)


def run_validator(args: argparse.Namespace) -> int:
    cases = load_cases(args.cases)
    candidates, default, decider = _prepare(args)
    bar = _progress(args, len(cases.cases), "query")
    try:
        result = tune_validator(
            decider, cases, candidates, default=default, progress=bar.update if bar else None
        )
    finally:
        if bar is not None:
            bar.close()
    return _finish(args, result, decider)


def _depth_grid() -> tuple[int, ...]:
    from ..tuning.locomo_rank import DEPTH_GRID

    return DEPTH_GRID


def run_keep(args: argparse.Namespace) -> int:
    from ..datasets.locomo import SPLITS
    from ..policy.budget import ADAPTIVE_BUDGET, GATED_TOP_K
    from ..policy.conversation import CONVERSATION_WEIGHTS
    from ..tuning.locomo_rank import fit_depths, judge_split

    if args.split != "dev":
        raise UsageError(f"--split {args.split}: what the gated arm keeps is fitted on dev only")
    try:
        depths = sorted({int(d) for d in args.depths.split(",") if d.strip()})
    except ValueError:
        raise UsageError(
            f"--depths {args.depths!r}: expected numbers separated by commas, e.g. 10,30"
        ) from None
    if not depths or depths[0] < 1:
        raise UsageError(f"--depths {args.depths!r}: every depth must be at least 1")
    if args.max_records < 1:
        raise UsageError("--max-records must be at least 1")
    if args.recall_tolerance < 0:
        raise UsageError("--recall-tolerance must be >= 0")
    bar = _progress(args, len(SPLITS[args.split]) * len(depths), "conversation x depth")
    try:
        judged, thresholds = judge_split(
            args.locomo, args.split, depths=depths, progress=bar.update if bar else None
        )
    finally:
        if bar is not None:
            bar.close()
    result = fit_depths(judged, thresholds=thresholds, cap=args.max_records, tolerance=args.recall_tolerance)
    result["shipped"] = {
        "gated_top_k": GATED_TOP_K["embedded"],
        "centre_log_odds": CONVERSATION_WEIGHTS.centre,
        "session": CONVERSATION_WEIGHTS.session,
        "budget": {
            "delta": ADAPTIVE_BUDGET.delta,
            "min_records": ADAPTIVE_BUDGET.min_records,
            "max_records": ADAPTIVE_BUDGET.max_records,
        },
    }
    if args.json:
        emit_json(result)
        return 0
    chosen = result["chosen"]
    print(
        f"tune keep: LoCoMo {args.split}, {chosen['questions']} questions, at most {args.max_records} "
        f"records per question (judge thresholds {thresholds.absolute:g} / {thresholds.relative})"
    )
    rows = [
        (
            depth,
            f"{f['judge_alone_at_cap']:.4f}",
            f"{f['rescored_at_cap']:.4f}",
            f"{f['with_budget']:.4f}",
            f"{f['records_per_question']:.3f}",
            "-" if f["held_out_by_conversation"] is None else f"{f['held_out_by_conversation']:.4f}",
        )
        for depth, f in result["by_depth"].items()
    ]
    print(
        table(
            rows,
            ["depth", "judge alone", "re-scored", "+ budget", "records / q", "held out by conversation"],
        )
    )
    b = chosen["budget"]
    print(
        f"\nchosen: gated_top_k {result['gated_top_k']}, centre {chosen['centre_cosine']:g} "
        f"(x judge scale = {chosen['centre_log_odds']:g} log-odds), session {chosen['session']:g}, "
        f"budget delta {b['delta']:g}, {b['min_records']}-{b['max_records']} records"
    )
    ship = result["shipped"]
    sb = ship["budget"]
    print(
        f"shipped: gated_top_k {ship['gated_top_k']}, centre {ship['centre_log_odds']:g} log-odds, "
        f"session {ship['session']:g}, budget delta {sb['delta']:g}, "
        f"{sb['min_records']}-{sb['max_records']} records"
    )
    return 0


def run_named_gate(args: argparse.Namespace) -> int:
    from ..datasets.locomo import SPLITS
    from ..tuning.named_gate import fit_named_gate, load_negatives

    if args.split != "dev":
        raise UsageError(f"--split {args.split}: the store-aware gate is fitted on dev only")
    if args.write_config:
        if Path(args.write_config).is_dir():
            raise UsageError(f"--write-config {args.write_config}: is a directory, expected a file path")
        if Path(args.write_config).exists():
            read_config(args.write_config)
    load_negatives(args.negatives)  # a bad file stops us before the models load
    decider = decider_from_args(args)
    if decider is None:
        raise UsageError("tuning needs a decider; 'none' is the ungated stock behaviour")
    bar = _progress(args, len(SPLITS[args.split]), "conversation")
    try:
        fit = fit_named_gate(
            args.locomo,
            decider,
            split=args.split,
            negatives_path=args.negatives,
            embedder=embedder_from_args(args),
            progress=bar.update if bar else None,
        )
    finally:
        if bar is not None:
            bar.close()
    note = ""
    if args.write_config:
        data = f"LoCoMo {args.split} + {fit.negatives_source}"
        write_config(args.write_config, fit.backend, {"gate_named": fit.fitted(data)})
        note = f"config: {args.write_config} ({fit.backend}: gate_named = {fit.named_threshold:g})"
    if args.json:
        emit_json(fit.as_dict())
        if note:
            sys.stderr.write(note + "\n")
        return 0
    print(
        f"tune named-gate: {fit.backend} on LoCoMo {fit.split} ({fit.positives} questions) and "
        f"{fit.negatives_source} ({fit.negatives} non-memory message x store pairs)"
    )
    print(
        table(
            [
                ("opens on memory questions", fit.open_rate["message_only"], fit.open_rate["with_store"]),
                (
                    "closes on non-memory messages",
                    fit.non_memory_closed_rate["message_only"],
                    fit.non_memory_closed_rate["with_store"],
                ),
                (
                    "balanced accuracy",
                    fit.balanced_accuracy["message_only"],
                    fit.balanced_accuracy["with_store"],
                ),
            ],
            [
                "",
                f"message only (t {fit.gate_threshold:g})",
                f"+ names in memory (t {fit.named_threshold:g})",
            ],
        )
    )
    print(
        f"name-like words found in memory: {fit.positives_named:.1%} of questions, "
        f"{fit.negatives_named:.1%} of non-memory pairs"
    )
    if note:
        print(note)
    return 0


def _fitted(result: TuneResult) -> dict[str, FittedThreshold]:
    """The shipped wording's fitted thresholds, by role."""
    shipped = next(c for c in result.candidates if c.shipped)
    if shipped.errors:
        raise UsageError(
            f"not writing a config: the shipped wording errored on {shipped.errors} item(s) "
            f"({shipped.error_samples[0]})"
        )
    m = shipped.metrics
    out: dict[str, FittedThreshold] = {}
    if result.kind == "gate":
        if m["best_threshold"] is not None:
            out[result.measured] = FittedThreshold(
                float(m["best_threshold"]),
                result.source,
                result.data_sha256,
                result.n,
                fit=f"best accuracy {m['best_accuracy']:.3f}; {5}-fold cv accuracy {m['cv_accuracy']:.3f}; "
                f"margin {m['margin']:+.3f}",
            )
    else:
        if shipped.keep_rule is not None:
            accuracy, threshold, delta = shipped.keep_rule
            fit = f"jointly fitted for keep='both' (p >= t and p >= best - d): pooled accuracy {accuracy:.3f}"
            for role, value in (("judge", threshold), ("judge_relative", delta)):
                out[role] = FittedThreshold(value, result.source, result.data_sha256, result.n, fit=fit)
    return out


def _finish(args: argparse.Namespace, result: TuneResult, decider: Decider) -> int:
    # Errors go to stderr, before anything else: a run in which every call failed says why first
    # and exits 1 (no table of dashes, no report, no config).
    if all(c.errors >= len(c.scores) for c in result.candidates):
        sample = next((c.error_samples[0] for c in result.candidates if c.error_samples), "no answer")
        raise RecallwiseError(
            f"every decider call failed ({result.decider_calls} calls to {result.backend}), "
            f"nothing was measured: {sample}"
        )
    for c in result.candidates:
        if c.errors:
            sys.stderr.write(
                f"ERRORS: {c.name} errored on {c.errors} item(s), e.g. {c.error_samples[0]}; "
                "excluded from best\n"
            )
    notes: list[str] = []
    if args.report:
        from ..tuning.report import write_report

        path = write_report(result, args.report)
        notes.append(f"report: {path}")
    if args.write_config:
        fitted = _fitted(result)
        write_config(args.write_config, result.backend, fitted)
        written = ", ".join(f"{role} = {f.value:.4f}" for role, f in fitted.items())
        notes.append(f"config: {args.write_config} ({result.backend}: {written})")
    if args.json:
        emit_json(result.json())
        for note in notes:
            sys.stderr.write(note + "\n")
        return 0
    _print(result, notes, _reads_wording(decider))
    return 0


_GATE_COLUMNS = [
    ("best_accuracy", "best acc"),
    ("best_threshold", "at t"),
    ("margin", "margin"),
    ("auc", "AUC"),
    ("configured_threshold", "conf t"),
    ("accuracy_at_configured", "acc@conf"),
    ("cv_accuracy", "cv acc"),
    ("ece", "ECE"),
    ("brier", "Brier"),
]
_VALIDATOR_COLUMNS = [
    ("margin", "margin"),
    ("best_accuracy", "best acc"),
    ("best_threshold", "at t"),
    ("mean_auc", "mean AUC"),
    ("mean_p_at_k", "mean P@k"),
    ("configured_threshold", "conf t"),
    ("accuracy_at_configured", "acc@conf"),
    ("relative_delta", "rel δ"),
    ("relative_accuracy", "rel acc"),
]


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}" if value < 0 else f"{value:.2f}"


def _print(result: TuneResult, notes: list[str], reads_wording: bool = True) -> None:
    gate = result.kind == "gate"
    columns = _GATE_COLUMNS if gate else _VALIDATOR_COLUMNS
    unit = "utterances" if gate else f"judged pairs over {len(result.candidates[0].queries)} queries"
    print(
        f"tune {result.measured.replace('_', '-') if gate else 'validator'}: {result.backend} on "
        f"{result.source} "
        f"(n = {result.n} {unit}; {result.decider_calls} decider calls)"
    )
    rows: list[list[Any]] = []
    for c in result.candidates:
        name = c.name + (" *" if c.name == result.default else "")
        rows.append([name] + [_cell(c.metrics.get(key)) for key, _ in columns])
    print(table(rows, ["candidate"] + [label for _, label in columns]))
    best = result.best
    default = result.candidate(result.default)
    print(f"* default wording; configured threshold from {default.configured_source}")
    if best is not None:
        print(f"best wording: {best.name}")
    if default.keep_rule is not None:
        accuracy, threshold, delta = default.keep_rule
        print(
            f"{default.name}, the policy's keep rule (p >= t and p >= best - d) fitted jointly: "
            f"t = {threshold:.3f}, d = {delta:.3f}, pooled accuracy {accuracy:.0%}"
        )
    for line in _echo_notes(result, reads_wording):
        print(line)
    if default.by_language:
        keys = ("accuracy_at_configured", "auc") if gate else ("mean_auc", "mean_p_at_k")
        labels = ("acc@conf", "AUC") if gate else ("mean AUC", "mean P@k")
        print(f"{default.name}, by language:")
        lang_rows = [
            [lang, int(figures["n"] or 0)] + [_cell(figures.get(k)) for k in keys]
            for lang, figures in sorted(default.by_language.items())
        ]
        print(table(lang_rows, ["lang", "n", *labels]))
    if result.n < 50:
        print(f"only {result.n} items: these figures show direction, not magnitude")
    for note in notes:
        print(note)


def _reads_wording(decider: Any) -> bool:
    """Whether a backend declares that its answers depend on a question's wording."""
    capabilities = getattr(decider, "capabilities", None)
    if capabilities is not None and hasattr(capabilities, "reads_wording"):
        return bool(capabilities.reads_wording)
    return bool(getattr(decider, "reads_wording", True))


#: answers closer than this count as the same (float32 backends differ in the 7th digit)
_SAME_ANSWER = 1e-4


def _echo_notes(result: TuneResult, reads_wording: bool = True) -> list[str]:
    """Explain rows that only echo the default wording's answers.

    A backend that does not read a question's wording (the embedded judge compares message and
    record and ignores the instructions) answers every wording of the same shape alike: such a
    row measures nothing new, and an ``inverted`` one is the default's answers flipped, so its
    AUC is one minus the default's. Found from the answers themselves, for any backend.
    """
    default = result.candidate(result.default)
    same: list[str] = []
    mirrored: list[str] = []
    for c in result.candidates:
        if c is default or c.errors or default.errors or not c.scores:
            continue
        flip = c.inverted != default.inverted
        if all(
            a is not None and b is not None and abs(a - ((1.0 - b) if flip else b)) < _SAME_ANSWER
            for a, b in zip(c.scores, default.scores, strict=True)
        ):
            (mirrored if flip else same).append(c.name)
    why = (
        f"{result.backend} does not read a question's wording"
        if not reads_wording
        else f"{result.backend} answered both wordings alike"
    )
    notes = []
    for names, what, so in (
        (same, f"the same answers as {default.name}", f"measures no wording other than {default.name}'s"),
        (
            mirrored,
            f"{default.name}'s answers flipped",
            f"mirrors {default.name}'s (AUC = 1 - its AUC); it is not a worse wording",
        ),
    ):
        if names:
            row = "rows" if len(names) > 1 else "row"
            notes.append(f"{', '.join(names)}: {what} on every item ({why}), so the {row} {so}")
    return notes
