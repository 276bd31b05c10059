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

The same file names learned heads (``recallwise tune gate|judge --fit ... --write-head H.npz
--write-config PATH``), by backend and role, with the sha256 of the head file and what it was
fitted on; a relative path is relative to the config file's folder::

      "heads": {"embedded": {"gate": {"path": "gate-head.npz", "sha256": "...", "n": 812,
                                      "date": "2026-12-05", "data": "labels.jsonl", "fit": "..."}}}

A head named here replaces the shipped one for that role, unless the decider was given one.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias

from .._renamed import OLD_CONFIG_FORMAT
from ..deciders import BaseDecider, default_threshold
from ..deciders.heads import Head, file_sha256, read_head
from ..errors import UsageError
from ..text import json_failure, loads_json_file, read_user_file
from .options import check_option

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FORMAT",
    "ROLES",
    "ConfigPath",
    "FittedHead",
    "FittedThreshold",
    "ResolvedThreshold",
    "ThresholdConfig",
    "config_from_env",
    "configured_decider",
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
    "gate_domain": "gate_domain_threshold",
    "follow_up": "follow_up_threshold",
    "route": "route_threshold",
}


def _today() -> str:
    """The date a fit is written on (UTC, ISO)."""
    return _dt.datetime.now(_dt.UTC).date().isoformat()


@dataclass(frozen=True)
class FittedThreshold:
    """One fitted threshold and what it was fitted on."""

    value: float
    data: str
    data_sha256: str
    n: int
    date: str = field(default_factory=_today)
    #: the wording it was fitted for (only the shipped wording is what the policy asks)
    question: str = "shipped"
    #: how it was chosen and what it scored, in words
    fit: str = ""


@dataclass(frozen=True)
class FittedHead:
    """A learned head's file, named by a config, and what it was fitted on."""

    path: str
    sha256: str
    n: int
    date: str = field(default_factory=_today)
    data: str = ""
    #: the fit's figures, in words
    fit: str = ""


#: the roles a head can answer
HEAD_ROLES = ("gate", "judge")


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
    #: learned heads by backend, then role ("gate", "judge")
    heads: dict[str, dict[str, FittedHead]] = field(default_factory=dict)

    def get(self, backend: str, role: str) -> FittedThreshold | None:
        return self.thresholds.get(backend, {}).get(role)

    def head(self, backend: str, role: str) -> FittedHead | None:
        return self.heads.get(backend, {}).get(role)

    def head_path(self, entry: FittedHead) -> Path:
        """The head file's path: a relative one is relative to the config file's folder."""
        path = Path(entry.path)
        if not path.is_absolute() and self.path is not None:
            path = self.path.parent / path
        return path

    def set_head(self, backend: str, role: str, entry: FittedHead) -> None:
        if role not in HEAD_ROLES:
            raise UsageError(f"unknown head role {role!r}; known: {', '.join(HEAD_ROLES)}")
        self.heads.setdefault(backend, {})[role] = entry

    def set(self, backend: str, role: str, fitted: FittedThreshold) -> None:
        if role not in ROLES:
            raise UsageError(f"unknown threshold role {role!r}; known: {', '.join(ROLES)}")
        self.thresholds.setdefault(backend, {})[role] = fitted

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": CONFIG_FORMAT,
            "thresholds": {
                backend: {role: asdict(fitted) for role, fitted in sorted(roles.items())}
                for backend, roles in sorted(self.thresholds.items())
            },
        }
        if self.heads:
            out["heads"] = {
                backend: {role: asdict(entry) for role, entry in sorted(roles.items())}
                for backend, roles in sorted(self.heads.items())
            }
        return out

    @classmethod
    def from_dict(cls, document: Any, where: str = "<config>") -> ThresholdConfig:
        """Validate a parsed config; errors name ``where`` and the backend and role."""
        # A config written before the rename carries the old format name; its content is the same.
        formats = (CONFIG_FORMAT, OLD_CONFIG_FORMAT)
        if not isinstance(document, Mapping) or document.get("format") not in formats:
            raise UsageError(
                f"{where}: not a recallwise threshold config (expected format {CONFIG_FORMAT!r})"
            )
        config = cls()
        thresholds = document.get("thresholds")
        fields = ("value", "data_sha256", "n", "date")
        for backend, role, entry, at in _fitted_entries(
            where, thresholds, "thresholds", ROLES, "role", fields
        ):
            # the range the option of the same role has (policy.options: one check for every entry point)
            value = check_option(ROLES[role], entry.get("value"), f"{at}: 'value'")
            if value is None:
                raise UsageError(f"{at}: 'value' is missing: a fitted threshold is a number")
            for name in ("data_sha256", "date"):
                if not isinstance(entry.get(name), str):
                    raise UsageError(f"{at}: missing {name!r}: a threshold without its data is not a fit")
            config.set(
                backend,
                role,
                FittedThreshold(
                    value=float(value),
                    data=str(entry.get("data", "")),
                    data_sha256=entry["data_sha256"],
                    n=_fit_size(at, entry),
                    date=entry["date"],
                    question=str(entry.get("question", "shipped")),
                    fit=str(entry.get("fit", "")),
                ),
            )
        heads, fields = document.get("heads", {}), ("path", "sha256", "n", "date")
        for backend, role, entry, at in _fitted_entries(
            where, heads, "heads", HEAD_ROLES, "head role", fields
        ):
            for name in ("path", "sha256", "date"):
                if not isinstance(entry.get(name), str) or not entry[name]:
                    raise UsageError(f"{at}: missing {name!r}")
            config.set_head(
                backend,
                role,
                FittedHead(
                    path=entry["path"],
                    sha256=entry["sha256"],
                    n=_fit_size(at, entry),
                    date=entry["date"],
                    data=str(entry.get("data", "")),
                    fit=str(entry.get("fit", "")),
                ),
            )
        return config


def _fitted_entries(
    where: str, table: Any, section: str, known: Collection[str], kind: str, fields: Sequence[str]
) -> Iterator[tuple[str, str, Mapping[str, Any], str]]:
    """(backend, role, entry, where the entry is) of a config section ``{backend: {role: entry}}``
    (``thresholds`` and ``heads`` share the layout); a malformed layout, an unknown role or an
    entry that is not an object is a :class:`UsageError` naming it."""
    if not isinstance(table, Mapping):
        raise UsageError(f"{where}: '{section}' must be an object {{backend: {{role: ...}}}}")
    for backend, roles in table.items():
        if not isinstance(roles, Mapping):
            raise UsageError(f"{where}: {section}[{backend!r}] must be an object {{role: ...}}")
        for role, entry in roles.items():
            at = f"{where}: {section}[{backend!r}][{role!r}]"
            if role not in known:
                raise UsageError(f"{at}: unknown {kind}; known: {', '.join(known)}")
            if not isinstance(entry, Mapping):
                raise UsageError(f"{at}: expected an object with {', '.join(map(repr, fields))}")
            yield str(backend), str(role), entry, at


def _fit_size(at: str, entry: Mapping[str, Any]) -> int:
    """The entry's ``n``: how many labelled items the fit saw."""
    n = entry.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageError(f"{at}: 'n' must be a positive integer, got {n!r}")
    return n


def read_config(path: ConfigPath) -> ThresholdConfig:
    """Read a threshold config; a missing or malformed file is a :class:`UsageError` naming it."""
    where = str(path)
    document = loads_json_file(read_user_file(path, "threshold config"), where)
    config = ThresholdConfig.from_dict(document, where)
    config.path = Path(path)
    return config


def write_config(
    path: ConfigPath,
    backend: str,
    fitted: Mapping[str, FittedThreshold],
    heads: Mapping[str, FittedHead] | None = None,
) -> ThresholdConfig:
    """Add (or replace) ``backend``'s fitted thresholds (and heads) in the config at ``path``.

    Other backends and roles already in the file are kept, so ``tune gate`` and ``tune
    validator`` can write to one file. A head's path is stored relative to the config's folder
    when it lies under it. The file is replaced atomically.
    """
    target = Path(path)
    config = read_config(target) if target.exists() else ThresholdConfig()
    for role, entry in fitted.items():
        config.set(backend, role, entry)
    for role, head in (heads or {}).items():
        head_path = Path(head.path).resolve()
        try:
            stored = str(head_path.relative_to(target.resolve().parent))
        except ValueError:
            stored = str(head_path)
        config.set_head(backend, role, replace(head, path=stored))
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
    backend: str,
    role: str,
    config: ThresholdConfig | None,
    given: float | None = None,
    head: Mapping[str, float] | None = None,
) -> ResolvedThreshold:
    """The one order: an explicit ``given`` value, then ``config``'s fit for ``backend`` and
    ``role``, then the threshold measured with the learned head answering that role (``head``:
    :meth:`~recallwise.deciders.EmbeddedDecider.head_thresholds`), then the backend's default
    (``measured=False`` when it was never measured)."""
    if given is not None:
        return ResolvedThreshold(float(given), "argument", True, "argument")
    fitted = config.get(backend, role) if config is not None else None
    if fitted is not None:
        where = f"config {config.path if config is not None and config.path else ''}".rstrip()
        return ResolvedThreshold(fitted.value, where, True, f"{where} (n={fitted.n}, {fitted.date})")
    if head is not None and role in head:
        return ResolvedThreshold(float(head[role]), "head", True, "measured with the learned head")
    default = default_threshold(backend, role)
    detail = "default" if default.measured else "default (unmeasured)"
    return ResolvedThreshold(default.value, "default", default.measured, detail)


def configured_decider(decider: BaseDecider, configs: Sequence[ThresholdConfig | None]) -> BaseDecider:
    """``decider`` answering with the heads the first of ``configs`` to name one gives, per role.

    Only a decider with learned heads (``with_heads``) takes them, and only for a role it was not
    given a head for. A head file that is missing, changed since the config was written, or fitted
    for another embedder is a :class:`UsageError` naming the config and the file.
    """
    with_heads = getattr(decider, "with_heads", None)
    if not callable(with_heads):
        return decider
    given: frozenset[str] = getattr(decider, "heads_given", frozenset())
    chosen: dict[str, Head] = {}
    for role in HEAD_ROLES:
        if role in given:
            continue
        for config in configs:
            entry = config.head(decider.name, role) if config is not None else None
            if config is None or entry is None:
                continue
            where = f"{config.path or 'config'}: heads[{decider.name!r}][{role!r}]"
            path = config.head_path(entry)
            if not path.is_file():
                raise UsageError(f"{where}: no head file {str(path)!r}")
            if file_sha256(path) != entry.sha256:
                raise UsageError(
                    f"{where}: {str(path)!r} changed since the config was written (sha256 differs); "
                    "refit it, or write the config again with the head"
                )
            chosen[role] = read_head(path, role, origin=f"config {config.path or ''}".rstrip())  # type: ignore[arg-type]
            break
    if not chosen:
        return decider
    configured: BaseDecider = with_heads(**chosen)
    return configured
