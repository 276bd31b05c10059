"""Fitted thresholds on disk: written by ``recallwise tune ... --write-config``, read by the policy.

A threshold belongs to a decision backend and a question role (``gate``, ``judge``,
``judge_relative``) and is worth what the data it was fitted on is worth, so every entry
carries that data's name, its sha256, its size and the date of the fit::

    {
      "format": "recallwise-thresholds/1",
      "thresholds": {
        "embedded": {
          "gate": {"value": 0.43, "data": "labels.jsonl", "data_sha256": "...", "n": 200,
                   "date": "2026-12-02", "question": "shipped", "fit": "best accuracy 0.950 ..."}
        }
      }
    }

``RecallPolicy.from_config(PATH, store)`` uses them, and so does any policy built while the
``RECALLWISE_CONFIG`` environment variable names such a file. The order is: an explicit
argument, then the config, then the backend's default (see
:mod:`recallwise.deciders.thresholds`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from .._renamed import OLD_CONFIG_FORMAT
from ..deciders import default_threshold
from ..errors import UsageError
from ..text import json_failure

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FORMAT",
    "ROLES",
    "ConfigPath",
    "FittedThreshold",
    "ResolvedThreshold",
    "ThresholdConfig",
    "config_from_env",
    "json_failure",
    "read_config",
    "resolve_threshold",
    "write_config",
]

ConfigPath: TypeAlias = str | os.PathLike[str]
CONFIG_ENV = "RECALLWISE_CONFIG"
CONFIG_FORMAT = "recallwise-thresholds/1"
#: question roles a threshold can belong to, and the RecallPolicy argument each one sets
ROLES = {
    "gate": "gate_threshold",
    "judge": "judge_threshold",
    "judge_relative": "relative_delta",
    "gate_named": "gate_named_threshold",
    "follow_up": "follow_up_threshold",
    "route": "route_threshold",
}


@dataclass(frozen=True)
class FittedThreshold:
    """One fitted threshold and what it was fitted on."""

    value: float
    data: str
    data_sha256: str
    n: int
    date: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).date().isoformat())
    #: the wording it was fitted for (only the shipped wording is what the policy asks)
    question: str = "shipped"
    #: how it was chosen and what it scored, in words
    fit: str = ""


@dataclass(frozen=True)
class ResolvedThreshold:
    """The threshold a policy uses for one role, and where it came from.

    ``source`` is ``"argument"``, ``"config PATH"`` or ``"default"``; ``detail`` adds the fit's
    size and date, or says that a default was never measured.
    """

    value: float
    source: str
    measured: bool
    detail: str = ""


@dataclass
class ThresholdConfig:
    """Fitted thresholds keyed by backend name, then role."""

    thresholds: dict[str, dict[str, FittedThreshold]] = field(default_factory=dict)
    path: Path | None = None

    def get(self, backend: str, role: str) -> FittedThreshold | None:
        return self.thresholds.get(backend, {}).get(role)

    def set(self, backend: str, role: str, fitted: FittedThreshold) -> None:
        if role not in ROLES:
            raise UsageError(f"unknown threshold role {role!r}; known: {', '.join(ROLES)}")
        self.thresholds.setdefault(backend, {})[role] = fitted

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CONFIG_FORMAT,
            "thresholds": {
                backend: {role: asdict(fitted) for role, fitted in sorted(roles.items())}
                for backend, roles in sorted(self.thresholds.items())
            },
        }

    @classmethod
    def from_dict(cls, document: Any, where: str = "<config>") -> ThresholdConfig:
        """Validate a parsed config; errors name ``where`` and the backend and role."""
        # A config written before the rename carries the old format name; its content is the same.
        formats = (CONFIG_FORMAT, OLD_CONFIG_FORMAT)
        if not isinstance(document, Mapping) or document.get("format") not in formats:
            raise UsageError(
                f"{where}: not a recallwise threshold config (expected format {CONFIG_FORMAT!r})"
            )
        table = document.get("thresholds")
        if not isinstance(table, Mapping):
            raise UsageError(f"{where}: 'thresholds' must be an object {{backend: {{role: ...}}}}")
        config = cls()
        for backend, roles in table.items():
            if not isinstance(roles, Mapping):
                raise UsageError(f"{where}: thresholds[{backend!r}] must be an object {{role: ...}}")
            for role, entry in roles.items():
                at = f"{where}: thresholds[{backend!r}][{role!r}]"
                if role not in ROLES:
                    raise UsageError(f"{at}: unknown role; known: {', '.join(ROLES)}")
                if not isinstance(entry, Mapping):
                    raise UsageError(f"{at}: expected an object with 'value', 'data_sha256', 'n', 'date'")
                value = entry.get("value")
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise UsageError(f"{at}: 'value' must be a number, got {value!r}")
                for name in ("data_sha256", "date"):
                    if not isinstance(entry.get(name), str):
                        raise UsageError(f"{at}: missing {name!r}: a threshold without its data is not a fit")
                n = entry.get("n")
                if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                    raise UsageError(f"{at}: 'n' must be a positive integer, got {n!r}")
                config.set(
                    str(backend),
                    str(role),
                    FittedThreshold(
                        value=float(value),
                        data=str(entry.get("data", "")),
                        data_sha256=entry["data_sha256"],
                        n=n,
                        date=entry["date"],
                        question=str(entry.get("question", "shipped")),
                        fit=str(entry.get("fit", "")),
                    ),
                )
        return config


def read_config(path: ConfigPath) -> ThresholdConfig:
    """Read a threshold config; a missing or malformed file is a :class:`UsageError` naming it."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{where}: no such threshold config") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: cannot read threshold config: {exc}") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line, problem = json_failure(text, exc)
        at = f"{where} line {line}" if line is not None else where
        raise UsageError(f"{at}: not valid JSON ({problem})") from None
    config = ThresholdConfig.from_dict(document, where)
    config.path = Path(path)
    return config


def write_config(path: ConfigPath, backend: str, fitted: Mapping[str, FittedThreshold]) -> ThresholdConfig:
    """Add (or replace) ``backend``'s fitted thresholds in the config at ``path``.

    Other backends and roles already in the file are kept, so ``tune gate`` and ``tune
    validator`` can write to one file. The file is replaced atomically.
    """
    target = Path(path)
    config = read_config(target) if target.exists() else ThresholdConfig()
    for role, entry in fitted.items():
        config.set(backend, role, entry)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(json.dumps(config.to_dict(), indent=2) + "\n", encoding="utf-8")
    os.replace(scratch, target)
    config.path = target
    return config


def config_from_env() -> ThresholdConfig | None:
    """The config named by ``RECALLWISE_CONFIG``, or None when the variable is unset or empty."""
    path = os.environ.get(CONFIG_ENV, "").strip()
    if not path:
        return None
    try:
        return read_config(path)
    except UsageError as exc:
        raise UsageError(f"{CONFIG_ENV}: {exc}") from None


def resolve_threshold(
    backend: str, role: str, config: ThresholdConfig | None, given: float | None = None
) -> ResolvedThreshold:
    """The one order: an explicit ``given`` value, then ``config``'s fit for ``backend`` and
    ``role``, then the backend's default (``measured=False`` when it was never measured)."""
    if given is not None:
        return ResolvedThreshold(float(given), "argument", True, "argument")
    fitted = config.get(backend, role) if config is not None else None
    if fitted is not None:
        where = f"config {config.path if config is not None and config.path else ''}".rstrip()
        return ResolvedThreshold(fitted.value, where, True, f"{where} (n={fitted.n}, {fitted.date})")
    default = default_threshold(backend, role)
    detail = "default" if default.measured else "default (unmeasured)"
    return ResolvedThreshold(default.value, "default", default.measured, detail)
