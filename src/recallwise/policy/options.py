"""Everything a :class:`~recallwise.policy.RecallPolicy` can be tuned by, in one typed value.

:class:`RecallOptions` is nested by stage, and this module is the one home of every plain default::

    RecallOptions(
        search=SearchOptions(top_k=10, gated_top_k=None, mode="hybrid"),
        thresholds=ThresholdOptions(gate=None, judge=None, ...),   # None: fitted or measured
        keep=KeepOptions(rule="both", relevance_score=0.2, ...),
        limits=LimitOptions(max_records=None, max_record_chars=600, ...),
        follow_up=FollowUpOptions(ttl_s=900.0, conversations=4096),
        reliability=ReliabilityOptions(decider_timeout_s=2.0, ...),
        cache_size=256,
    )

The measured defaults (thresholds, the gated search depth, the episodic weights) are not here:
they belong to a backend and carry their provenance (:mod:`recallwise.deciders.thresholds`,
:mod:`recallwise.policy.budget`, :mod:`recallwise.policy.conversation`). A threshold left at None
is resolved from a fitted config or that measured default (:mod:`recallwise.policy.thresholds`).

This nested form is the one form of the options. ``RecallPolicy(...)`` alone also takes flat
keywords (``top_k=5``, ``gate_threshold=0.6``, ``keep="relative"``), each shorthand for one nested
field (:data:`FLAT_NAMES`): ``RecallPolicy(store, gate_threshold=0.6)`` is
``RecallPolicy(store, options=RecallOptions(thresholds=ThresholdOptions(gate=0.6)))``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..errors import UsageError
from ..ranges import OptionRange
from .budget import ADAPTIVE_BUDGET, GATED_TOP_K, AdaptiveBudget
from .conversation import CONVERSATION_WEIGHTS, ConversationWeights

__all__ = [
    "EPISODIC_OPTIONS",
    "FLAT_NAMES",
    "OPTION_RANGES",
    "FollowUpOptions",
    "KeepOptions",
    "KeepRule",
    "LimitOptions",
    "RecallOptions",
    "ReliabilityOptions",
    "SearchOptions",
    "ThresholdOptions",
    "check_option",
    "shorthand_value",
    "with_shorthand",
]


#: The options for episodic memories, as fitted on LoCoMo dev (``recallwise tune keep``):
#: ``RecallPolicy(store, **EPISODIC_OPTIONS)``. ``recallwise bench locomo``'s gated arm runs with them.
#: The keep rule is the absolute threshold alone: the adaptive budget is episodic memory's relative
#: rule (within a delta of the best, in log-odds); a judge head's relative rule on top (``tune
#: judge`` can save one, fitted on preferences) kept fewer records than the budget on LoCoMo dev
#: (3.9 a question); the shipped head has none. The judge reads no life domains for them
#: (``judge_domains``: neither the score's life-domain term nor a head's table; both ranked
#: LoCoMo's evidence worse).
EPISODIC_OPTIONS: Mapping[str, Any] = MappingProxyType(
    {
        "conversation_rescore": CONVERSATION_WEIGHTS,
        "adaptive_budget": ADAPTIVE_BUDGET,
        "keep": "absolute",
        "judge_domains": False,
        "keep_by_gate": False,
    }
)


KeepRule = Literal["absolute", "relative", "both"]


# ---- the range of each numeric option (checked by recallwise.ranges.OptionRange) -------------------
_PROBABILITY = OptionRange(
    float, 0.0, 1.0, none="resolved from a fit or a measured default", what="a probability"
)
_CHARS = OptionRange(int, 1, what="a count of characters")
_SECONDS = OptionRange(float, 0.0, what="seconds")

#: Every numeric option, by its flat name (:data:`FLAT_NAMES`): what values it takes.
OPTION_RANGES: Mapping[str, OptionRange] = MappingProxyType(
    {
        "top_k": OptionRange(int, 1, what="records searched per namespace"),
        "gated_top_k": OptionRange(
            int, 1, none="the depth fitted for the decider", what="records searched per namespace"
        ),
        "gate_threshold": _PROBABILITY,
        "gate_named_threshold": _PROBABILITY,
        "gate_domain_threshold": _PROBABILITY,
        "judge_threshold": _PROBABILITY,
        # a delta of 1 keeps every record the absolute rule keeps: the relative rule off
        "relative_delta": OptionRange(
            float,
            0.0,
            1.0,
            none="resolved from a fit or a measured default",
            what="a difference of probabilities",
        ),
        "route_threshold": OptionRange(float, 0.0, 1.0, none="the route is off", what="a probability"),
        "follow_up_threshold": OptionRange(float, 0.0, 1.0, none="measured or off", what="a probability"),
        "relevance_score": OptionRange(float, 0.0, 1.0, what="a similarity score"),
        "max_records": OptionRange(int, 1, none="as many as the keep rule keeps", what="a count of records"),
        "max_record_chars": _CHARS,
        "max_context_chars": _CHARS,
        "max_state_chars": _CHARS,
        "follow_up_ttl_s": _SECONDS,
        "follow_up_conversations": OptionRange(int, 0, what="conversations remembered; 0: follow-ups off"),
        "decider_timeout_s": OptionRange(float, 0.0, what="seconds"),
        "store_timeout_s": OptionRange(float, 0.0, what="seconds"),
        "breaker_threshold": OptionRange(int, 1, what="consecutive failing calls"),
        "breaker_cooldown_s": _SECONDS,
        "store_breaker_cooldown_s": _SECONDS,
        "cache_size": OptionRange(int, 0, what="turns remembered; 0: the cache off"),
    }
)


def check_option(name: str, value: Any, where: str = "") -> Any:
    """``value`` checked against the range of the option ``name`` (:data:`OPTION_RANGES`): the one
    check the policy's options, a config file's thresholds and the commands' flags share."""
    return OPTION_RANGES[name].check(name, value, where)


@dataclass(frozen=True)
class LimitOptions:
    """Sizes: what the decider reads and what the context block may hold."""

    #: the most records kept a turn (None: as many as the keep rule keeps)
    max_records: int | None = None
    #: a record longer than this is cut in the context block
    max_record_chars: int = 600
    #: the context block's size (:func:`recallwise.policy.pack.pack_context`)
    max_context_chars: int = 4000
    #: the message as the decider reads it is cut to this (the trace says so)
    max_state_chars: int = 2000

    def __post_init__(self) -> None:
        _check_ranges(self, "limits")


def _check_ranges(group: Any, name: str) -> None:
    """Every numeric field of the option group ``group`` (``RecallOptions.<name>``) in its range,
    named by its flat name (``thresholds.gate`` is ``gate_threshold``)."""
    for f in dataclasses.fields(group):
        flat = _FLAT_OF.get((name, f.name))
        if flat is not None and flat in OPTION_RANGES:
            check_option(flat, getattr(group, f.name))


@dataclass(frozen=True)
class SearchOptions:
    """How deep and how each namespace is searched."""

    #: records searched per namespace by the stock arm (and kept when they pass
    #: ``KeepOptions.relevance_score``); the gated arm searches ``gated_top_k`` when that is set
    top_k: int = 10
    #: records searched per namespace when a decider judges them. None (default): the depth
    #: fitted for the decider's backend (``policy.budget.GATED_TOP_K``: 30 for the embedded
    #: decider, fitted on LoCoMo dev) or ``top_k`` when that is larger; ``top_k`` for a backend
    #: with no fitted depth. The judge keeps a few, so searching deeper costs judge time, not
    #: prompt tokens. A turn's own ``top_k`` (``recall(..., top_k=N)``, a framework asking for
    #: a page) is searched as asked.
    gated_top_k: int | None = None
    #: the gated arm fuses full-text and dense search; the stock arm is always dense, as upstream
    mode: Literal["dense", "hybrid"] = "hybrid"

    def __post_init__(self) -> None:
        _check_ranges(self, "search")
        if self.mode not in ("dense", "hybrid"):
            raise UsageError(f"search_mode must be 'dense' or 'hybrid', got {self.mode!r}")

    def depth(self, backend: str | None) -> int:
        """Records searched per namespace by a policy whose decider is ``backend`` (None: stock)."""
        if backend is None:
            return self.top_k
        if self.gated_top_k is not None:
            return self.gated_top_k
        return max(self.top_k, GATED_TOP_K.get(backend, self.top_k))


@dataclass(frozen=True)
class ThresholdOptions:
    """A threshold per question role; None (each by default) resolves it from a fitted config or
    the decider's measured default (:mod:`recallwise.policy.thresholds`). The field names are the
    roles' names, as in fitted configs and ``stats.report()``."""

    #: the gate: retrieve when the gate's probability is at least this
    gate: float | None = None
    #: the store-aware gate's lower threshold (the message names something the memory mentions)
    gate_named: float | None = None
    #: the profile-aware gate's lower threshold (the message is in a life domain the actor's
    #: records touch: the store's per-actor profile, :mod:`recallwise.stores.profile`)
    gate_domain: float | None = None
    #: the judge's absolute rule: keep a record the judge gives at least this
    judge: float | None = None
    #: the judge's relative rule: keep records within this of the best one of the turn
    judge_relative: float | None = None
    #: the route: a namespace is searched when the route gives it at least this (every one when
    #: the route is unsure). Asked only when the namespaces have descriptions.
    route: float | None = None
    #: the follow-up question (a backend with neither a measured nor a given one never asks it)
    follow_up: float | None = None

    def __post_init__(self) -> None:
        _check_ranges(self, "thresholds")

    def given(self) -> dict[str, float | None]:
        """Every role and what was given for it (None: not given)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class KeepOptions:
    """Which judged records are kept (the stock arm: which searched ones)."""

    #: "absolute" (``thresholds.judge``), "relative" (within ``thresholds.judge_relative`` of the
    #: turn's best record) or "both"
    rule: KeepRule = "both"
    #: the stock arm's score floor (``decider=None``), as upstream's ``relevance_score``
    relevance_score: float = 0.2
    #: For episodic memories (observations of what happened, session by session, like
    #: LoCoMo's): after the judge, re-score a turn's records by the sessions they came from and
    #: their closeness to the pool's centre (:mod:`recallwise.policy.conversation`;
    #: ``CONVERSATION_WEIGHTS`` were fitted on LoCoMo dev). Off (None) by default: on a
    #: persona's facts and preferences, also told over several conversations, it drops records
    #: a turn needs (``recallwise demo``: the flight turn loses YVR, the dinner turn the
    #: vegetarian and peanut-allergy records). Embedded decider only: the weights are in its
    #: judge log-odds (another decider's answers are left as they are, and the trace says so).
    conversation_rescore: ConversationWeights | None = None
    #: For episodic memories: keep as many records as :class:`AdaptiveBudget` says, after the
    #: thresholds (``LimitOptions.max_records`` still caps it; ``ADAPTIVE_BUDGET`` keeps at most 5). Off
    #: (None) by default: the demo's dinner turn needs 11 records. Embedded decider only.
    adaptive_budget: AdaptiveBudget | None = None
    #: Whether the embedded judge reads the life domains: its ranking score's life-domain term
    #: (the message and the record about the same domain: "dinner" reaches "peanut allergy"
    #: through food) and a head's life-domain table, if it has one. Off for episodic memories,
    #: where both rank LoCoMo's evidence worse (dev recall at <= 5 records 0.7414 without the
    #: term, 0.7343 with it). Embedded decider only (another decider is left as it is).
    judge_domains: bool = True
    #: Whether the keep reads the turn's need for memory: the judge is told it (the gate's p when
    #: the gate, or a name in the store, opened the turn; nothing for a follow-up), and a judge head
    #: that reads it (the shipped one, issue 49) says "nothing belongs" on its own; with a judge
    #: that does not, the absolute threshold reads a record's p times the gate's p when the gate
    #: opened on it, else 1 (opened by a name in the store, a follow-up, a failed gate or no gate).
    #: P(the record belongs) = P(memory is needed) x P(it belongs when memory is needed): a turn the
    #: gate opened on barely keeps only its clearest records. On the
    #: outside calibration split it halved the records kept on general requests that the gate
    #: opened on (0.88 -> 0.38 a turn, `BENCHMARKS.md`) at the same right records kept. Off for
    #: episodic memories, whose options were fitted without it.
    by_gate: bool = True

    def __post_init__(self) -> None:
        for name in ("judge_domains", "by_gate"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.rule not in ("absolute", "relative", "both"):
            raise UsageError(f"keep must be 'absolute', 'relative' or 'both', got {self.rule!r}")
        _check_ranges(self, "keep")
        if self.conversation_rescore is not None and not isinstance(
            self.conversation_rescore, ConversationWeights
        ):
            raise UsageError(
                "conversation_rescore must be a ConversationWeights or None (off), "
                f"got {self.conversation_rescore!r}"
            )
        if self.adaptive_budget is not None and not isinstance(self.adaptive_budget, AdaptiveBudget):
            raise UsageError(
                f"adaptive_budget must be an AdaptiveBudget or None (off), got {self.adaptive_budget!r}"
            )


@dataclass(frozen=True)
class FollowUpOptions:
    """Follow-ups (:mod:`recallwise.policy.follow_up`): "continue" or "what about tomorrow?" after
    a turn that retrieved retrieves too, for the two messages together (its threshold is
    ``ThresholdOptions.follow_up``)."""

    #: how long a conversation's last request counts, in seconds
    ttl_s: float = 900.0
    #: how many conversations are remembered (LRU; 0 turns follow-ups off)
    conversations: int = 4096

    def __post_init__(self) -> None:
        _check_ranges(self, "follow_up")


@dataclass(frozen=True)
class ReliabilityOptions:
    """How a remote decider or store (``local = False``) is called: under a deadline, behind a
    circuit breaker that opens after ``breaker_threshold`` consecutive failing calls and stays
    open ``breaker_cooldown_s`` (the decider) or ``store_breaker_cooldown_s`` (the store) before
    one trial call; a failed trial opens it again for as long.

    The store's is short: while it is open every turn injects nothing, so each second it stays
    open after the store is back is a second of recalls without memory, and a trial costs one
    turn (at most ``store_timeout_s``; a PostgreSQL store that knows its database is down fails
    it in half a second). A decider's open circuit still recalls (failing open), so it waits longer.
    """

    decider_timeout_s: float = 2.0
    store_timeout_s: float = 5.0
    breaker_threshold: int = 3
    breaker_cooldown_s: float = 30.0
    store_breaker_cooldown_s: float = 1.0

    def __post_init__(self) -> None:
        _check_ranges(self, "reliability")


_GROUPS: dict[str, type[Any]] = {
    "search": SearchOptions,
    "thresholds": ThresholdOptions,
    "keep": KeepOptions,
    "limits": LimitOptions,
    "follow_up": FollowUpOptions,
    "reliability": ReliabilityOptions,
}


@dataclass(frozen=True)
class RecallOptions:
    """Everything a policy can be tuned by, one group per stage (see the module docs).

    ``RecallOptions(search=SearchOptions(top_k=5), keep=KeepOptions(rule="relative"))``: each
    group is its own frozen dataclass, and a group left out has its defaults. A copy with one
    field changed is ``dataclasses.replace(options, search=dataclasses.replace(options.search,
    top_k=5))``, or :func:`with_shorthand` with the field's flat name.
    """

    search: SearchOptions = field(default_factory=SearchOptions)
    thresholds: ThresholdOptions = field(default_factory=ThresholdOptions)
    keep: KeepOptions = field(default_factory=KeepOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)
    follow_up: FollowUpOptions = field(default_factory=FollowUpOptions)
    reliability: ReliabilityOptions = field(default_factory=ReliabilityOptions)
    #: turns whose query embedding and gate answers are remembered (LRU; 0 turns it off)
    cache_size: int = 256

    def __post_init__(self) -> None:
        for name, kind in _GROUPS.items():
            value = getattr(self, name)
            if not isinstance(value, kind):
                raise UsageError(f"RecallOptions {name}= must be a {kind.__name__}, got {value!r}")
        check_option("cache_size", self.cache_size)


#: ``RecallPolicy(...)``'s shorthand keywords, each the nested field it sets: ``(group, field)``,
#: or ``(name, None)`` for a top-level field (the table in the guide's Options section).
FLAT_NAMES: Mapping[str, tuple[str, str | None]] = MappingProxyType(
    {
        "top_k": ("search", "top_k"),
        "gated_top_k": ("search", "gated_top_k"),
        "search_mode": ("search", "mode"),
        "gate_threshold": ("thresholds", "gate"),
        "gate_named_threshold": ("thresholds", "gate_named"),
        "gate_domain_threshold": ("thresholds", "gate_domain"),
        "judge_threshold": ("thresholds", "judge"),
        "relative_delta": ("thresholds", "judge_relative"),
        "route_threshold": ("thresholds", "route"),
        "follow_up_threshold": ("thresholds", "follow_up"),
        "keep": ("keep", "rule"),
        "relevance_score": ("keep", "relevance_score"),
        "conversation_rescore": ("keep", "conversation_rescore"),
        "adaptive_budget": ("keep", "adaptive_budget"),
        "judge_domains": ("keep", "judge_domains"),
        "keep_by_gate": ("keep", "by_gate"),
        "max_records": ("limits", "max_records"),
        "max_record_chars": ("limits", "max_record_chars"),
        "max_context_chars": ("limits", "max_context_chars"),
        "max_state_chars": ("limits", "max_state_chars"),
        "follow_up_ttl_s": ("follow_up", "ttl_s"),
        "follow_up_conversations": ("follow_up", "conversations"),
        "decider_timeout_s": ("reliability", "decider_timeout_s"),
        "store_timeout_s": ("reliability", "store_timeout_s"),
        "breaker_threshold": ("reliability", "breaker_threshold"),
        "breaker_cooldown_s": ("reliability", "breaker_cooldown_s"),
        "store_breaker_cooldown_s": ("reliability", "store_breaker_cooldown_s"),
        "cache_size": ("cache_size", None),
    }
)

#: (group, field) -> the flat name that sets it
_FLAT_OF: Mapping[tuple[str, str], str] = MappingProxyType(
    {(group, name): flat for flat, (group, name) in FLAT_NAMES.items() if name is not None}
)


def with_shorthand(options: RecallOptions | None, shorthand: Mapping[str, Any]) -> RecallOptions:
    """``options`` (the defaults when None) with ``shorthand`` applied: flat names of
    :data:`FLAT_NAMES`, each setting its one nested field. An unknown name is a
    :class:`UsageError` listing the known ones."""
    if options is not None and not isinstance(options, RecallOptions):
        raise UsageError(f"options= must be a recallwise.RecallOptions, got {options!r}")
    base = options if options is not None else RecallOptions()
    unknown = sorted(set(shorthand) - set(FLAT_NAMES))
    if unknown:
        raise UsageError(f"unknown RecallPolicy option(s) {unknown}; known: {', '.join(sorted(FLAT_NAMES))}")
    if not shorthand:
        return base
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for name, value in shorthand.items():
        group, fieldname = FLAT_NAMES[name]
        if fieldname is None:
            top[group] = value
        else:
            nested.setdefault(group, {})[fieldname] = value
    for group, values in nested.items():
        top[group] = dataclasses.replace(getattr(base, group), **values)
    return dataclasses.replace(base, **top)


def shorthand_value(options: RecallOptions, name: str) -> Any:
    """The value of the field the flat name ``name`` sets (``top_k``: ``options.search.top_k``)."""
    group, fieldname = FLAT_NAMES[name]
    value = getattr(options, group)
    return value if fieldname is None else getattr(value, fieldname)
