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
from typing import TYPE_CHECKING, Any

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
from ..tuning.heads import OPEN_RATE, RECORDS_PER_REQUEST
from . import emit_json, progress_bar
from .common import add_decider, add_embedder, add_json, decider_from_args, embedder_from_args, table

if TYPE_CHECKING:
    from ..serve.refit import HeadName


def register(subparsers: argparse._SubParsersAction) -> None:
    gate = _labelled_messages(
        subparsers,
        "gate",
        "gate",
        help="compare gate wordings on labelled utterances and fit the gate threshold; or fit a "
        "learned gate head (--fit / --from-log)",
        description="Ask every candidate gate wording about every labelled utterance (one decider "
        "call per utterance) and report separation, ranking and calibration per wording. With --fit "
        "or --from-log: fit and calibrate a learned gate head on labelled turns instead, and report "
        "the gate before and after it.",
        labels="true = answering needs a stored personal fact; builtin:seed and builtin:heldout are "
        "shipped sets; with --from-log, the labels of logged decisions",
    )
    _head_flags(gate, "gate")

    judge = subparsers.add_parser(
        "judge",
        help="fit a learned judge head on turns with labelled records (--fit / --from-log)",
        description="Fit and calibrate the embedded decider's judge head on labelled turns (each "
        "turn's records searched as the policy searches them) and report the judge before and after "
        "it: separation, calibration, the right records kept and records kept per request. "
        "(`tune validator` compares judge wordings.)",
    )
    judge.add_argument(
        "--labels",
        metavar="LABELS.jsonl",
        help="with --from-log: the labels of logged decisions (GET /v1/labels, `recallwise log --labels`; "
        "default: none)",
    )
    _head_flags(judge, "judge")
    add_embedder(judge, "the embedded decider")
    add_json(judge)
    judge.set_defaults(func=run_fit, role="judge")
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
    _decider_flags(named, "the embedded decider (and the LoCoMo stores)")
    _write_config_flag(named, "the fitted threshold")
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
) -> argparse.ArgumentParser:
    """A ``tune`` command asking one yes/no question about labelled messages (gate, follow-up)."""
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.add_argument(
        "--labels",
        required=role != "gate",
        metavar="FILE.jsonl|builtin:NAME",
        help='one {"text": str, "label": bool} per line ('
        + labels
        + ")"
        + ("; default: none, then --fit or --from-log fits a head" if role == "gate" else ""),
    )
    _common(parser, role)
    parser.set_defaults(func=run_gate)
    return parser


def _head_flags(parser: argparse.ArgumentParser, role: str) -> None:
    """The flags of fitting a learned head (``tune gate`` and ``tune judge``)."""
    pattern = f"{role}-*.jsonl"
    parser.add_argument(
        "--fit",
        action="append",
        metavar="DATA.jsonl|DIR",
        help=f"labelled turns to fit the {role} head on (a file, a folder's {pattern} files, or a "
        "shipped set: builtin:seed, builtin:dev); repeat to add more (default: none)",
    )
    parser.add_argument(
        "--calibrate",
        action="append",
        metavar="DATA.jsonl|DIR",
        help="held-out labelled turns to calibrate on and grade by (default: out-of-fold predictions "
        "of the fit data)",
    )
    parser.add_argument(
        "--from-log",
        metavar="LOG.db",
        help="fit on logged decisions: their messages and records from this decision log, their "
        "labels from --labels, the turns labelled for this head (default: none)",
    )
    parser.add_argument(
        "--write-head",
        metavar="PATH.npz",
        help=f"save the fitted {role} head here (default: report only, nothing written)",
    )
    if role == "gate":
        parser.add_argument(
            "--open-rate",
            type=float,
            default=OPEN_RATE,
            help="the head's threshold (saved with it) is the highest that still opens on this share "
            "of the graded turns that need memory (default %(default)s)",
        )
    else:
        parser.add_argument(
            "--records-per-request",
            type=float,
            default=RECORDS_PER_REQUEST,
            help="the head's keep threshold (saved with it) is the lowest at which the graded requests "
            "keep at most this many records on average (default %(default)s)",
        )
        parser.add_argument(
            "--domain-table",
            action="store_true",
            help="also fit which life domains bear on which (441 more weights: for thousands of "
            "labelled requests; see the datasheet for what it did on the project's data)",
        )
    if role == "judge":
        parser.add_argument(
            "--write-config",
            metavar="PATH",
            help="also name the written head in this threshold config (merged), which "
            "RecallPolicy.from_config and RECALLWISE_CONFIG load (default: not written)",
        )


def _fit_mode(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "fit", None) or getattr(args, "from_log", None))


def _decider_flags(parser: argparse.ArgumentParser, embedder_for: str) -> None:
    """--decider and --url, --embedder as the embedded decider's model (tune has no store), and
    --json: the flags of every tune command that asks a decider."""
    add_decider(parser)
    add_embedder(parser, embedder_for)
    add_json(parser)
    parser.set_defaults(embedder_for_decider=True)


def _write_config_flag(parser: argparse.ArgumentParser, saved: str, more: str = "") -> None:
    """--write-config: where the fitted threshold(s) for this decider are saved (merged)."""
    parser.add_argument(
        "--write-config",
        metavar="PATH",
        help=f"save {saved} for this decider into PATH (merged; default: not saved){more}",
    )


def _common(parser: argparse.ArgumentParser, role: Role) -> None:
    parser.add_argument(
        "--candidates",
        metavar="FILE",
        help="YAML or JSON file of named questions (default: the shipped wording and contrasting ones)",
    )
    _decider_flags(parser, "the embedded decider")
    parser.add_argument(
        "--report",
        metavar="OUT.html",
        help="write a self-contained HTML report with charts (default: no report)",
    )
    _write_config_flag(
        parser, "the shipped wording's fitted threshold(s)", "; with --fit, name the written head in PATH"
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


def run_gate(args: argparse.Namespace) -> int:
    """``tune gate`` and ``tune follow-up``: one yes/no question over labelled messages."""
    if args.role == "gate" and _fit_mode(args):
        return run_fit(args)
    if args.role == "gate":
        if getattr(args, "calibrate", None) or getattr(args, "write_head", None):
            raise UsageError("--calibrate and --write-head go with --fit or --from-log (fitting a head)")
        if not args.labels:
            raise UsageError("tune gate needs --labels FILE (compare wordings) or --fit DATA (fit a head)")
    labels = load_labels(args.labels, FOLLOW_UP_FILE if args.role == "follow_up" else GATE_FILE)
    candidates, default, decider = _prepare(args)
    with progress_bar(args, labels.n, unit="utterance", desc="asking") as bar:
        result = tune_gate(decider, labels, candidates, default=default, progress=bar.update, role=args.role)
    return _finish(args, result, decider)


def run_validator(args: argparse.Namespace) -> int:
    cases = load_cases(args.cases)
    candidates, default, decider = _prepare(args)
    with progress_bar(args, len(cases.cases), unit="query", desc="asking") as bar:
        result = tune_validator(decider, cases, candidates, default=default, progress=bar.update)
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
    with progress_bar(
        args, len(SPLITS[args.split]) * len(depths), unit="conversation x depth", desc="asking"
    ) as bar:
        judged, thresholds = judge_split(args.locomo, args.split, depths=depths, progress=bar.update)
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
    with progress_bar(args, len(SPLITS[args.split]), unit="conversation", desc="asking") as bar:
        fit = fit_named_gate(
            args.locomo,
            decider,
            split=args.split,
            negatives_path=args.negatives,
            embedder=embedder_from_args(args),
            progress=bar.update,
        )
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


# ---- fitting learned heads ------------------------------------------------------------


def _fit_data(args: argparse.Namespace, role: HeadName) -> tuple[list[Any], list[dict[str, Any]], list[str]]:
    """The turns to fit on, where each set came from, and notes (what a log's labels left out)."""
    from ..serve.refit import logged_turns
    from ..tuning.labelled import read_labelled_sources, read_labelled_turns

    pattern = f"{role}-*.jsonl"
    turns, sources = read_labelled_sources(args.fit or [], pattern, role)
    notes: list[str] = []
    if args.from_log:
        if not args.labels:
            raise UsageError("--from-log LOG.db needs --labels LABELS.jsonl (the labels of its decisions)")
        # the log's labels hold both heads' (a turn's gate, its records, or both): the turns
        # labelled for this head are fitted on, as the inspector's refit preview does
        logged = logged_turns(role, args.from_log, read_labelled_turns(args.labels), source=args.labels)
        turns.extend(logged.turns)
        sources.append(
            {
                "path": f"{args.from_log} + {args.labels}",
                "turns": len(logged.turns),
                "left_out": logged.left_out,
            }
        )
        if logged.note:
            notes.append(logged.note)
    elif args.labels and args.role == "judge":
        raise UsageError("--labels goes with --from-log LOG.db (use --fit for a labelled-turn file)")
    return turns, sources, notes


def run_fit(args: argparse.Namespace) -> int:
    """``tune gate --fit`` / ``tune judge --fit``: fit a learned head, report before and after."""
    from ..deciders.embedded import EmbeddedDecider
    from ..deciders.heads import file_sha256
    from ..policy.config import FittedHead, configured_decider
    from ..policy.thresholds import Thresholds
    from ..serve.refit import fit_head
    from ..tuning.labelled import read_labelled_sources

    role: HeadName = args.role
    if not _fit_mode(args):
        raise UsageError(
            f"tune {role} needs --fit DATA (labelled turns) or --from-log LOG.db --labels LABELS"
        )
    if getattr(args, "decider", "embedded") != "embedded":
        raise UsageError(f"learned heads are the embedded decider's; --decider {args.decider} has none")
    for flag in ("report", "candidates"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag} compares wordings; it does not go with --fit")
    for flag, path in (("--write-head", args.write_head), ("--write-config", args.write_config)):
        if path and Path(path).is_dir():
            raise UsageError(f"{flag} {path}: is a directory, expected a file path")
        if path and not Path(path).resolve().parent.is_dir():
            raise UsageError(f"{flag} {path}: folder {str(Path(path).parent)!r} does not exist")
    if args.write_config and not args.write_head:
        raise UsageError("--write-config names the head in a config: give --write-head PATH.npz too")
    env = config_from_env()  # a broken RECALLWISE_CONFIG is reported now, not after the fit
    if args.write_config and Path(args.write_config).exists():
        read_config(args.write_config)
    turns, sources, data_notes = _fit_data(args, role)
    calibration = (
        read_labelled_sources(args.calibrate, f"{role}-*.jsonl", role)[0] if args.calibrate else None
    )
    embedder = embedder_from_args(args)
    current = configured_decider(EmbeddedDecider(embedder), [env])
    assert isinstance(current, EmbeddedDecider)
    thresholds = Thresholds.resolve("embedded", configs=[env], head=current.head_thresholds()).values
    provenance = {
        "data": sources,
        "calibration": [s["path"] for s in read_labelled_sources(args.calibrate, f"{role}-*.jsonl", role)[1]]
        if args.calibrate
        else "out of fold",
        "command": "recallwise " + " ".join(getattr(args, "argv", sys.argv[1:])),
    }
    total = len(turns) + (len(calibration) if calibration else 0)
    if role == "gate":  # the gate's work is embedding every message in each model's space
        total *= 2 if current.multilingual_decider() is not None else 1
    with progress_bar(args, total, unit="message" if role == "gate" else "turn", desc="asking") as bar:
        fit = fit_head(
            role,
            turns,
            current=current,
            thresholds=thresholds,
            embedder=embedder,
            calibration=calibration,
            open_rate=getattr(args, "open_rate", OPEN_RATE),
            records_per_request=getattr(args, "records_per_request", RECORDS_PER_REQUEST),
            domain_table=getattr(args, "domain_table", False),
            progress=bar.update,
            provenance=provenance,
        )
    fit.notes[:0] = data_notes
    written: dict[str, str | None] = {"head": None, "config": None}
    if args.write_head:
        path = fit.write(args.write_head)
        written["head"] = str(path)
        if args.write_config:
            after = fit.after
            entry = FittedHead(
                path=str(path),
                sha256=file_sha256(path),
                n=int(fit.head.provenance.get("n") or len(turns)),
                data=", ".join(str(s["path"]) for s in sources),
                fit=f"{fit.graded_on}: accuracy {after['accuracy']:.3f}, AUC {after['auc']:.3f}, "
                f"ECE {after['ece']:.3f}",
            )
            write_config(args.write_config, "embedded", {}, heads={role: entry})
            written["config"] = args.write_config
    if args.json:
        emit_json({**fit.as_dict(), "data": sources, "written": written})
        return 0
    _print_fit(fit, sources, written)
    return 0


_FIT_ROWS = {
    "gate": [
        ("accuracy", "accuracy"),
        ("auc", "AUC"),
        ("ece", "ECE"),
        ("open_rate_true", "opens when memory is needed"),
        ("closed_rate_false", "closes when it is not"),
    ],
    "judge": [
        ("accuracy", "accuracy"),
        ("auc", "AUC (pooled)"),
        ("mean_auc", "AUC (per turn)"),
        ("ece", "ECE"),
        ("right_kept", "right records kept"),
        ("records_kept_per_request", "records kept per request"),
        ("records_kept_per_general_turn", "records kept per general turn"),
    ],
}


def _print_fit(fit: Any, sources: list[dict[str, Any]], written: dict[str, str | None]) -> None:
    turns = sum(int(s["turns"]) for s in sources)
    print(
        f"tune {fit.role} --fit: {turns} labelled turns from {len(sources)} file(s); graded on "
        f"{fit.graded_on} (n = {fit.after['n']})"
    )
    rows = []
    for key, label in _FIT_ROWS[fit.role]:
        before, after = fit.before.get(key), fit.after.get(key)
        rows.append((label, _cell(before), _cell(after)))
    print(table(rows, ["", "before (current)", "after (fitted)"]))
    spaces = ", ".join(f"{name} (n={w.n})" for name, w in fit.head.spaces.items())
    print(f"head: {spaces}")
    for note in fit.notes:
        print(f"note: {note}")
    if written["head"]:
        print(f"head written: {written['head']}")
        if written["config"]:
            print(f"config: {written['config']} names it (RECALLWISE_CONFIG={written['config']} to use it)")
        else:
            print("use it: name it in a config with --write-config PATH")
    else:
        print("nothing written (--write-head PATH to save the head)")
