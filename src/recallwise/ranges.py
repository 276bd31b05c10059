"""The one check of a numeric option, wherever it enters: a Python argument, a config file's entry, a
command's flag or an environment variable. Each option's range is declared once (the policy's in
:data:`recallwise.policy.options.OPTION_RANGES`); the error is one line naming the option, the value
and the range."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .errors import UsageError

__all__ = ["OptionRange", "env_option", "flag_type"]


@dataclass(frozen=True)
class OptionRange:
    """The values one numeric option may take: its kind (``int`` or ``float``), a closed range
    and whether None (off, or: resolve it elsewhere) is allowed.

    Every entry point checks an option with its range: a policy's options (Python:
    :data:`recallwise.policy.options.OPTION_RANGES`), a threshold config's ``value`` (a file, or the
    one ``RECALLWISE_CONFIG`` names), a command's flag (:func:`flag_type`) and an environment
    variable (:func:`env_option`). The error is one line naming the option, the value and the range.
    """

    kind: type[int] | type[float]
    low: float
    high: float = math.inf
    none: str | None = None  # what None means, when it is allowed
    #: what the option is, for the error ("a probability", "a count of records")
    what: str = ""

    def describe(self) -> str:
        """The allowed values, in words: ``a number in [0, 1] (a probability), or None (...)``."""
        kind = "an integer" if self.kind is int else "a number"
        span = f">= {self.low:g}" if self.high == math.inf else f"in [{self.low:g}, {self.high:g}]"
        what = f" ({self.what})" if self.what else ""
        return f"{kind} {span}{what}" + (f", or None ({self.none})" if self.none else "")

    def check(self, name: str, value: Any, where: str = "") -> Any:
        """``value`` when it is allowed, else a :class:`UsageError` naming ``name``, the value
        and the range (``where`` prefixes it: a file and the entry)."""
        if value is None and self.none is not None:
            return None
        number = not isinstance(value, bool) and (
            isinstance(value, int) if self.kind is int else isinstance(value, (int, float))
        )
        if not (number and math.isfinite(value) and self.low <= value <= self.high):
            prefix = f"{where}: " if where else ""
            raise UsageError(f"{prefix}{name}={value!r} is not allowed: {self.describe()}")
        return value

    def parse(self, name: str, text: str) -> Any:
        """A flag's or a variable's text as the option's value, checked (``none`` / empty: None
        when None is allowed)."""
        if self.none is not None and text.strip().lower() in ("", "none"):
            return None
        try:
            value: Any = self.kind(text)
        except ValueError:
            raise UsageError(f"{name}={text!r} is not allowed: {self.describe()}") from None
        return self.check(name, value)


def flag_type(allowed: OptionRange, flag: str) -> Any:
    """An argparse ``type=`` parsing a flag's text and checking it against ``allowed``: a bad value
    is argparse's usage error (exit 2) naming the flag, the value and the range, as the same
    option's error is in Python and in a config file."""
    import argparse

    def parse(text: str) -> Any:
        try:
            return allowed.parse(flag, text)
        except UsageError:  # argparse's message names the flag: "argument --last: '0' is not allowed: ..."
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: {allowed.describe()}") from None

    parse.__name__ = flag  # argparse names the type in some messages
    return parse


def env_option(variable: str, allowed: OptionRange, default: Any) -> Any:
    """The value of the environment variable ``variable`` (``default`` when unset or empty),
    checked against ``allowed``: a bad one is a :class:`UsageError` naming the variable."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    return allowed.parse(variable, text)
