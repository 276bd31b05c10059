"""Where a policy's thresholds come from: the one place the order is applied.

An explicit argument wins, then a fitted config (``RecallPolicy.from_config(PATH, ...)``, then the
file ``RECALLWISE_CONFIG`` names), then the thresholds measured with the decider's learned heads
(a head file carries the operating point chosen when it was fitted), then the backend's measured default
(:mod:`recallwise.deciders.thresholds`); :func:`~recallwise.policy.config.resolve_threshold` holds
that order for one role. A default that was never measured is used but listed in
:attr:`Thresholds.unmeasured` (``stats.report()`` says so first). The store-aware gate's lower
threshold (``gate_named``), the follow-up question's (``follow_up``) and the route's (``route``)
are only ever on where they were measured, fitted or given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .config import ROLES as _ROLE_OPTIONS
from .config import ThresholdConfig, resolve_threshold

__all__ = ["ROLES", "Thresholds"]

#: question roles a threshold can belong to
ROLES = tuple(_ROLE_OPTIONS)
#: roles that stay off unless given, fitted or measured: the route among them (no labelled routing set
#: exists, so no backend has a measured route threshold: an unmeasured route could hide a namespace
#: holding the records a turn needs, as 0.25 hid a vegetarian diet filed under /facts from a dinner
#: question routed to /preferences)
_OPT_IN = frozenset({"gate_named", "gate_domain", "follow_up", "route"})


@dataclass(frozen=True)
class Thresholds:
    """The thresholds one policy uses, with where each came from."""

    values: dict[str, float] = field(default_factory=dict)
    #: role -> "argument", "config PATH" or "default"
    sources: dict[str, str] = field(default_factory=dict)
    #: "backend:role" for each default in use that was never measured
    unmeasured: list[str] = field(default_factory=list)

    @classmethod
    def resolve(
        cls,
        backend: str | None,
        given: Mapping[str, float | None] | None = None,
        configs: Sequence[ThresholdConfig | None] = (),
        head: Mapping[str, float] | None = None,
    ) -> Thresholds:
        """Resolve every role for ``backend``; ``backend=None`` (the stock arm) takes only ``given``.

        ``configs`` are tried in order for a role no argument sets (e.g. the file given to
        ``from_config``, then ``RECALLWISE_CONFIG``'s); then ``head``, the thresholds measured
        with the decider's learned heads; then the backend's default.
        """
        given = given or {}
        out = cls()
        for role in ROLES:
            value = given.get(role)
            if backend is None:
                if value is not None:
                    out.values[role], out.sources[role] = float(value), "argument"
                continue
            fitted = next((c for c in configs if c is not None and c.get(backend, role)), None)
            resolved = resolve_threshold(backend, role, fitted, value, head)
            if role in _OPT_IN and resolved.source == "default" and not resolved.measured:
                continue
            out.values[role], out.sources[role] = resolved.value, resolved.source
            if not resolved.measured:
                out.unmeasured.append(f"{backend}:{role}")
        return out
