"""What the ``recallwise tune`` commands share (each is a module of its own: ``tune_gate`` and so on):
their flags, and running them.

Comparing wordings (``tune gate``, ``follow-up``, ``validator``) reads labelled data (``builtin:seed``
or your own file), validates all of it before any decider call, asks every candidate wording about
every item (one call per item), and prints per-candidate separation, ranking and calibration figures.
``--report`` draws the picture, ``--write-config`` saves the shipped wording's fitted thresholds for
``RecallPolicy``. Fitting a learned head (``tune gate --fit``, ``tune judge``) is :func:`run_fit`.
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
    load_labels,
    tune_gate,
)
from ..tuning.candidates import Role, WordingCandidate
from ..tuning.data import FOLLOW_UP_FILE, GATE_FILE
from ..tuning.gate_head import OPEN_RATE
from ..tuning.judge_head import RECORDS_PER_REQUEST
from ..tuning.refit import (
    GUARD,
    SHIPPED,
    TOLERANCE,
    USER_WEIGHT,
    combine,
    guard_figure,
    on_labels,
    refusal,
    shipped_data,
)
from . import progress_bar, report
from .common import add_decider, add_embedder, add_json, decider_from_args, embedder_from_args, table

if TYPE_CHECKING:
    from ..serve.refit import HeadName


def add_labels(parser: argparse.ArgumentParser, role: Role, labels: str) -> None:
    """The flags of a ``tune`` command asking one yes/no question about labelled messages (gate,
    follow-up): --labels, whose rows ``labels`` describes, and the wording flags."""
    parser.add_argument(
        "--labels",
        required=role not in ("gate", "follow_up"),
        metavar="FILE.jsonl|builtin:NAME",
        help='one {"text": str, "label": bool} per line ('
        + labels
        + ")"
        + ("; default: none, then --fit or --from-log fits a head" if role == "gate" else "")
        + ("; default: none, then --fit fits the pair head" if role == "follow_up" else ""),
    )
    add_wording_flags(parser, role)


def add_head_flags(parser: argparse.ArgumentParser, role: str) -> None:
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
        help="held-out labelled turns to calibrate on and grade by; the fit is then exactly the --fit "
        "data (default: the shipped calibration split, see --base)",
    )
    parser.add_argument(
        "--base",
        default=SHIPPED,
        metavar="shipped|none|DIR",
        help="without --calibrate, the data your labels are combined with: 'shipped' (data/decisions/ "
        "of a source checkout: its fit sets, calibrated and graded on its calib/ split), a folder "
        "holding fit/ and calib/, or 'none' (your labels alone, graded out of fold) "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--weight",
        type=float,
        default=USER_WEIGHT,
        help="how many of the base data's turns each of your labelled turns weighs (default %(default)s)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write the head even when it is worse than the current one on the calibration split "
        f"(by more than {TOLERANCE}; without it that exits 2 and writes nothing)",
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


def fit_mode(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "fit", None) or getattr(args, "from_log", None))


def add_decider_flags(parser: argparse.ArgumentParser, embedder_for: str) -> None:
    """--decider and --url, --embedder as the embedded decider's model (tune has no store), and
    --json: the flags of every tune command that asks a decider."""
    add_decider(parser)
    add_embedder(parser, embedder_for)
    add_json(parser)
    parser.set_defaults(embedder_for_decider=True)


def add_write_config(parser: argparse.ArgumentParser, saved: str, more: str = "") -> None:
    """--write-config: where the fitted threshold(s) for this decider are saved (merged)."""
    parser.add_argument(
        "--write-config",
        metavar="PATH",
        help=f"save {saved} for this decider into PATH (merged; default: not saved){more}",
    )


def add_locomo(parser: argparse.ArgumentParser) -> None:
    """--locomo and --split: the LoCoMo data a command fits on (``tune named-gate``, ``tune keep``)."""
    parser.add_argument(
        "--locomo",
        required=True,
        metavar="DIR",
        help="LoCoMo data directory (README: where LoCoMo comes from)",
    )
    parser.add_argument(
        "--split",
        default="dev",
        help="the split to fit on (default %(default)s; dev only: test is for reporting)",
    )


def add_wording_flags(parser: argparse.ArgumentParser, role: Role) -> None:
    """The flags of comparing wordings: --candidates, the decider's, --report and --write-config."""
    parser.add_argument(
        "--candidates",
        metavar="FILE",
        help="YAML or JSON file of named questions (default: the shipped wording and contrasting ones)",
    )
    add_decider_flags(parser, "the embedded decider")
    parser.add_argument(
        "--report",
        metavar="OUT.html",
        help="write a self-contained HTML report with charts (default: no report)",
    )
    add_write_config(
        parser, "the shipped wording's fitted threshold(s)", "; with --fit, name the written head in PATH"
    )
    parser.set_defaults(role=role)


# ---- running --------------------------------------------------------------------------


def _candidates(args: argparse.Namespace) -> tuple[list[WordingCandidate], str]:
    if args.candidates:
        return load_candidates(args.candidates, args.role)
    candidates = default_candidates(args.role)
    return candidates, candidates[0].name


def prepare(args: argparse.Namespace) -> tuple[list[WordingCandidate], str, Decider]:
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


def run_labelled(args: argparse.Namespace) -> int:
    """``tune gate`` and ``tune follow-up``: one yes/no question over labelled messages."""
    if args.role == "gate" and fit_mode(args):
        return run_fit(args)
    if args.role == "gate":
        if getattr(args, "calibrate", None) or getattr(args, "write_head", None):
            raise UsageError("--calibrate and --write-head go with --fit or --from-log (fitting a head)")
        if not args.labels:
            raise UsageError("tune gate needs --labels FILE (compare wordings) or --fit DATA (fit a head)")
    labels = load_labels(args.labels, FOLLOW_UP_FILE if args.role == "follow_up" else GATE_FILE)
    candidates, default, decider = prepare(args)
    with progress_bar(args, labels.n, unit="utterance", desc="asking") as bar:
        result = tune_gate(decider, labels, candidates, default=default, progress=bar.update, role=args.role)
    return finish(args, result, decider)


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


def finish(args: argparse.Namespace, result: TuneResult, decider: Decider) -> int:
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
    keep = _policy_keep_rule(decider) if result.kind != "gate" else ""
    return report(args, result.json(), lambda _: _print(result, notes, _reads_wording(decider), keep), notes)


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


def _policy_keep_rule(decider: Any) -> str:
    """The keep rule a default policy with ``decider`` applies, in words, from the thresholds it
    resolves (policy.thresholds: its learned head's operating point, ``RECALLWISE_CONFIG``'s fit, or
    the backend's default), so the line printed is the policy's, not the one this command fits."""
    from ..policy.thresholds import Thresholds

    backend = str(getattr(decider, "name", type(decider).__name__))
    head = getattr(decider, "head_thresholds", None)
    values = Thresholds.resolve(backend, {}, [config_from_env()], head() if callable(head) else None).values
    rule = f"p x the turn's need for memory >= {values['judge']:.3g} (keep_by_gate)"
    relative = values.get("judge_relative", 1.0)
    return rule + (f" and p >= best - {relative:.3g}" if relative < 1.0 else "; no relative rule")


def _print(result: TuneResult, notes: list[str], reads_wording: bool = True, keep: str = "") -> None:
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
    if keep:
        print(f"the default policy keeps a record when {keep}")
    if default.keep_rule is not None:
        accuracy, threshold, delta = default.keep_rule
        print(
            f"{default.name}, fitted here for keep='both' (p >= t and p >= best - d; what --write-config "
            f"writes): t = {threshold:.3f}, d = {delta:.3f}, pooled accuracy {accuracy:.0%}"
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
    from ..stores.urls import redact_url
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
                "path": f"{redact_url(args.from_log)} + {args.labels}",
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
    if not fit_mode(args):
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
    own, sources, data_notes = _fit_data(args, role)
    pattern = f"{role}-*.jsonl"
    # without --calibrate: the user's labels weighed against the shipped fit data, graded on the
    # shipped calibration split (tuning/refit.py); with it: exactly the --fit data
    base = None if args.calibrate else shipped_data(args.base)
    turns, weights = list(own), None
    base_sources: list[dict[str, Any]] = []
    if args.calibrate:
        calibration_specs: list[str] | None = list(args.calibrate)
    elif base is not None:
        base_turns, base_sources = read_labelled_sources(base.fit_specs(role), pattern, role)
        turns, weights = combine(own, base_turns, args.weight)
        calibration_specs = base.calibration_specs()
    else:
        calibration_specs = None
    calibration = read_labelled_sources(calibration_specs, pattern, role)[0] if calibration_specs else None
    embedder = embedder_from_args(args)
    current = configured_decider(EmbeddedDecider(embedder), [env])
    assert isinstance(current, EmbeddedDecider)
    thresholds = Thresholds.resolve("embedded", configs=[env], head=current.head_thresholds()).values
    provenance: dict[str, Any] = {
        "data": sources,
        "calibration": [s["path"] for s in read_labelled_sources(calibration_specs, pattern, role)[1]]
        if calibration_specs
        else "out of fold",
        "command": "recallwise " + " ".join(getattr(args, "argv", sys.argv[1:])),
    }
    if base is not None:
        provenance["base"] = {"data": base_sources, "user_weight": args.weight}
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
            weights=weights,
        )
    fit.notes[:0] = data_notes
    labels = on_labels(fit, own, current, thresholds) if base is not None else None
    refused = refusal(fit)
    if refused and args.write_head and not args.force:
        raise UsageError(refused)
    if refused:
        fit.notes.append(refused.replace("not written", "worse", 1) if args.write_head else refused)
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
    result = {
        **fit.as_dict(),
        "data": sources,
        "base": provenance.get("base"),
        "on_labels": labels,
        "guard": {
            "figure": GUARD[role][0],
            "before": guard_figure(role, fit.before),
            "after": guard_figure(role, fit.after),
            "tolerance": TOLERANCE,
            "worse": refused is not None,
            "forced": bool(refused and args.force and args.write_head),
        },
        "written": written,
    }
    return report(args, result, lambda _: _print_fit(fit, sources, written, labels))


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


def _print_fit(
    fit: Any,
    sources: list[dict[str, Any]],
    written: dict[str, str | None],
    labels: dict[str, dict[str, Any]] | None = None,
) -> None:
    turns = sum(int(s["turns"]) for s in sources)
    base = fit.head.provenance.get("base")
    combined = (
        f", combined with {sum(int(s['turns']) for s in base['data'])} shipped turns (yours weigh "
        f"{base['user_weight']:g} each)"
        if base
        else ""
    )
    print(
        f"tune {fit.role} --fit: {turns} labelled turns from {len(sources)} file(s){combined}; graded on "
        f"{fit.graded_on} (n = {fit.after['n']})"
    )
    rows = []
    for key, label in _FIT_ROWS[fit.role]:
        before, after = fit.before.get(key), fit.after.get(key)
        row = [label, _cell(before), _cell(after)]
        if labels is not None:
            row += [_cell(labels["before"].get(key)), _cell(labels["after"].get(key))]
        rows.append(row)
    headers = ["", "before (current)", "after (fitted)"]
    if labels is not None:
        headers += ["your labels: before", "after (in sample)"]
    print(table(rows, headers))
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
