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
from typing import TYPE_CHECKING, Any

from .._renamed import RenamedWarning
from ..errors import RecallwiseError, UsageError

if TYPE_CHECKING:
    from tqdm import tqdm

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
    """Progress bars go to stderr, only on a terminal and never with ``--json``."""
    return not getattr(args, "json", False) and sys.stderr.isatty()


def progress_bar(args: argparse.Namespace, total: int | None = None, **options: Any) -> tqdm:
    """A progress bar on stderr, cleared when done, that draws only when :func:`progress_enabled`.

    Use it as a context manager (it closes on the way out, on errors too). Without a terminal
    it is tqdm's disabled bar, whose methods do nothing, so callers pass ``bar.update`` as is.
    """
    from tqdm import tqdm

    return tqdm(total=total, file=sys.stderr, leave=False, disable=not progress_enabled(args), **options)


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="recallwise",
        description="Decide what an AI agent should remember right now: "
        "gate, route and judge memory retrieval.",
    )
    parser.add_argument("--version", action="version", version=f"recallwise {__version__}")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    groups: dict[str, Any] = {}
    for group, module_name in COMMANDS:
        target = top
        if group is not None:
            if group not in groups:
                summary, description = _help(GROUPS[group])
                group_parser = top.add_parser(group, help=summary, description=description or summary)
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
    parser = subparsers.add_parser(name, help=summary, description=description)
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


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
