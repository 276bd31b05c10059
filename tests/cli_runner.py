"""The CLI in this process: ``main(argv)`` with its output captured, as a finished command.

Most CLI tests run this way: a subprocess costs seconds of imports and model loading each, and
the command's code is the same. A few tests still run the console script in a real process (the
spine's text demo, the first-hour mistakes, the examples), so the entry point is covered too.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import NamedTuple

from recallwise.cli import main


class Finished(NamedTuple):
    """What a command left: its exit code and what it wrote (the shape of ``CompletedProcess``;
    it unpacks as ``code, out, err``)."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*argv: str, cwd: str | os.PathLike[str] | None = None) -> Finished:
    """Run ``recallwise ARGV`` in-process (in ``cwd`` when given) and return how it finished."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(Path(cwd)))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return Finished(code, out.getvalue(), err.getvalue())
