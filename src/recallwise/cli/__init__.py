"""The ``recallwise`` command: one subcommand per user job, mirroring the Python API.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. A user
mistake (bad URL, bad file, bad flag) is one line on stderr and exit code 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._renamed import RenamedWarning
from ..errors import RecallwiseError, UsageError
from ..ranges import OptionRange, flag_type

__all__ = ["add_command", "emit_json", "fail", "main", "report"]

# (group, module): each module under recallwise.cli is one command, named after the module less its
# group (``bench_store`` is ``bench store``, ``tune_named_gate`` is ``tune named-gate``), that defines
# ``add_arguments(parser)`` and ``run(args) -> int`` (see :func:`add_command`). What the commands of a
# group share lives beside them (``tune``: the tune commands' flags and runs).
COMMANDS: list[tuple[str | None, str]] = [
    (None, "demo"),
    (None, "search"),
    (None, "ingest"),
    ("tune", "tune_gate"),
    ("tune", "tune_judge"),
    ("tune", "tune_follow_up"),
    ("tune", "tune_validator"),
    ("tune", "tune_named_gate"),
    ("tune", "tune_keep"),
    (None, "ask"),
    (None, "log"),
    (None, "serve"),
    ("keys", "keys_new"),
    (None, "mcp"),
    (None, "hook"),
    ("bench", "bench_locomo"),
    ("bench", "bench_decisions"),
    ("bench", "bench_latency"),
    ("bench", "bench_store"),
    ("bench", "bench_serve"),
    ("bench", "bench_mcp"),
    ("bench", "bench_inspector"),
    ("bench", "bench_extract"),
]
# a group's help as a command's (see add_command): the line the top --help lists, then, after a blank
# line, its own --help's description when that says more
GROUPS = {
    "tune": "measure question wordings on labelled data and fit thresholds",
    "keys": "make API keys for recallwise serve\n\nManage a recallwise serve keys file.",
    "bench": "benchmarks: decision quality, latency, store speed",
}


def emit_json(payload: Any) -> None:
    """Print one JSON object on stdout."""
    sys.stdout.write(json.dumps(payload, indent=2, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(value: Any) -> Any:
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:  # pragma: no cover
        pass
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def report(
    args: argparse.Namespace, result: Any, print_text: Callable[[Any], None], notes: Sequence[str] = ()
) -> int:
    """A command's last step: with ``--json``, ``result`` as the one JSON object it prints (and
    ``notes``, what it wrote besides, on stderr); without, ``print_text(result)``, whose text says
    them itself. Returns the exit code, 0."""
    if getattr(args, "json", False):
        emit_json(result)
        for note in notes:
            sys.stderr.write(note + "\n")
    else:
        print_text(result)
    return 0


def fail(message: str, code: int = 2) -> int:
    """Print a one-line error on stderr and return ``code``."""
    sys.stderr.write(f"recallwise: error: {message}\n")
    return code


def _one_line_warnings() -> None:
    """Show a :class:`RenamedWarning` as one ``recallwise: warning: ...`` line on stderr (the
    user's action is in the message; a source line and file name would only add noise)."""
    shown = warnings.showwarning
    if getattr(shown, "one_line", False):
        return

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, RenamedWarning):
            sys.stderr.write(f"recallwise: warning: {message}\n")
        else:
            shown(message, category, *args, **kwargs)

    show.one_line = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def progress_enabled(args: argparse.Namespace) -> bool:
    """A progress bar draws on stderr only on a terminal and never with ``--json``; elsewhere
    :func:`progress_bar` writes a line a stage instead."""
    return not getattr(args, "json", False) and sys.stderr.isatty()


def progress_bar(args: argparse.Namespace, total: int | None = None, **options: Any) -> Any:
    """Progress on stderr: a bar, cleared when done, on a terminal (:func:`progress_enabled`);
    otherwise (piped, logged, ``--json``) a benchmark (``recallwise bench ...``, the runs that take
    minutes) writes a line a stage (:class:`StageLines`), so it is never minutes of silence, and
    any other command writes nothing.

    Use it as a context manager (it closes on the way out, on errors too). Both take ``update``,
    ``set_postfix_str``, ``set_description``, ``reset``, ``refresh`` and ``total`` / ``n``, so
    callers pass ``bar.update`` as is.
    """
    if not progress_enabled(args):
        if getattr(args, "command", None) != "bench":  # the long runs; others stay quiet when piped
            from tqdm import tqdm

            return tqdm(total=total, file=sys.stderr, disable=True)
        return StageLines(
            total, desc=str(options.get("desc") or "progress"), unit=str(options.get("unit") or "")
        )
    from tqdm import tqdm

    return tqdm(total=total, file=sys.stderr, leave=False, **options)


class StageLines:
    """Progress as lines on stderr, for a stderr that is not a terminal: one when work starts, one
    when its stage changes (``set_postfix_str`` / ``set_description``: a data set, a benchmark
    stage), one each further tenth of ``total`` done, and one at the end with the time taken.
    Nothing is written before the first step, so a command that fails first prints only its error."""

    def __init__(self, total: int | None = None, *, desc: str = "progress", unit: str = "") -> None:
        self.total, self.n, self.desc, self.unit = total, 0, desc, unit
        self._stage = ""
        self._tenths = 0
        self._started: float | None = None

    def __enter__(self) -> StageLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _line(self, text: str) -> None:
        sys.stderr.write(f"{self.desc}: {text}\n")
        sys.stderr.flush()

    def _start(self) -> None:
        if self._started is None:
            import time

            self._started = time.monotonic()
            of = f" of {self.total} {self.unit}".rstrip() if self.total else ""
            self._line(f"started{of}")

    def _count(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.n}/{self.total}{unit}" if self.total else f"{self.n}{unit}"

    def update(self, n: float = 1) -> None:
        self._start()
        self.n += int(n)
        self._tenth()

    def refresh(self) -> None:
        self._start()
        self._tenth()

    def _tenth(self) -> None:
        if self.total:
            tenths = min(10, self.n * 10 // self.total)
            if tenths > self._tenths and tenths < 10:
                self._tenths = tenths
                self._line(f"{tenths * 10}% ({self._count()})")

    def set_postfix_str(self, stage: str = "", refresh: bool = True) -> None:
        self._stage_is(stage)

    def set_description(self, stage: str | None = None, refresh: bool = True) -> None:
        self._stage_is(stage or "")

    def _stage_is(self, stage: str) -> None:
        self._start()
        if stage and stage != self._stage:
            self._stage = stage
            self._line(f"{stage} ({self._count()})")

    def reset(self, total: int | None = None) -> None:
        self.total, self.n, self._tenths = total, 0, 0

    def close(self) -> None:
        if self._started is not None:
            import time

            self._line(f"done: {self._count()} in {time.monotonic() - self._started:.1f} s")
            self._started = None


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="recallwise",
        description="Decide what an AI agent should remember right now: "
        "gate, route and judge memory retrieval.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"recallwise {__version__}")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    groups: dict[str, Any] = {}
    for group, module_name in COMMANDS:
        target = top
        if group is not None:
            if group not in groups:
                summary, description = _help(GROUPS[group])
                group_parser = top.add_parser(
                    group, help=summary, description=description or summary, allow_abbrev=False
                )
                groups[group] = group_parser.add_subparsers(dest=f"{group}_command", metavar="COMMAND")
                group_parser.set_defaults(func=_group_help(group_parser))
            target = groups[group]
        module = importlib.import_module(f"{__name__}.{module_name}")
        name = module_name.removeprefix(f"{group}_").replace("_", "-")
        add_command(target, name, module.add_arguments, module.run)
    return parser


def _help(text: str) -> tuple[str, str | None]:
    """A command's help: its first paragraph, the line its group's ``--help`` lists, and the rest,
    the description its own ``--help`` shows (None when there is none); white space folded, as
    argparse folds it when it prints them."""
    summary, _, description = inspect.cleandoc(text).partition("\n\n")
    return " ".join(summary.split()), " ".join(description.split()) or None


def add_command(
    subparsers: argparse._SubParsersAction,
    name: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """Add the command ``name``, whose flags ``add_arguments`` adds and which ``run`` runs.

    ``add_arguments``'s docstring is the command's help, written once where its flags are: the
    first paragraph is the line its group's ``--help`` lists, the rest the description its own
    ``--help`` shows (white space folded, as argparse folds it when it prints them).
    """
    summary, description = _help(add_arguments.__doc__ or "")
    # allow_abbrev=False: a mistyped flag is an error naming it, never taken for the flag it
    # begins (``serve --stor`` is not ``--store``)
    parser = subparsers.add_parser(name, help=summary, description=description, allow_abbrev=False)
    add_arguments(parser)
    checked_numbers(parser)
    parser.set_defaults(func=run)
    return parser


#: the range a numeric flag that declares none gets: a finite number, not negative
_NUMBER = {int: OptionRange(int, 0), float: OptionRange(float, 0.0)}


def checked_numbers(parser: argparse.ArgumentParser) -> None:
    """Give every ``type=int`` / ``type=float`` flag of ``parser`` the one range check
    (:func:`recallwise.ranges.flag_type`): a finite number >= 0. A flag with its own range declares
    it with ``flag_type`` (``--port``: 0-65535), which this leaves alone; either way a bad value is
    argparse's usage error (exit 2) naming the flag, the value and the range."""
    for action in parser._actions:
        if action.type in _NUMBER and action.option_strings:
            action.type = flag_type(_NUMBER[action.type], action.option_strings[-1])


def _group_help(parser: argparse.ArgumentParser) -> Any:
    def run(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return run


def main(argv: Sequence[str] | None = None) -> int:
    # Small matrix products are slower with threaded BLAS; set before numpy loads.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    _one_line_warnings()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]  # provenance of what a command wrote
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    if getattr(args, "store_required", False) and args.store is None:  # cli.common.add_store
        command = " ".join(
            str(getattr(args, k)) for k in ("command", "bench_command") if getattr(args, k, None)
        )
        return fail(
            f"{command}: give --store URL (e.g. --store sqlite:///memory.db) or set RECALLWISE_STORE; "
            "only `recallwise demo` has a default store, the demo's own"
        )
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        return fail(str(exc))
    except RecallwiseError as exc:
        return fail(str(exc), code=1)
    except KeyboardInterrupt:
        return fail("interrupted", code=130)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
