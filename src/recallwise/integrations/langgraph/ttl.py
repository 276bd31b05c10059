"""LangGraph TTL on recallwise records: what an item's metadata says about its expiry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import TTLConfig

from ...records import MemoryRecord

#: the metadata entry of an item's record: key, value, updated_at, and when set, indexed / ttl
META = "langgraph"
_TTL_KEYS = ("refresh_on_read", "omit_expired", "default_ttl", "sweep_interval_minutes")
#: minutes between sweeps when neither start_ttl_sweeper nor the TTLConfig says (as PostgresStore)
DEFAULT_SWEEP_MINUTES = 5.0
#: a refresh on read is written only when it moves the expiry by at least this share of the TTL:
#: an item read many times a second is rewritten once per 1% of its TTL, not once per read
_REFRESH_SLACK = 0.01


def saved_entry(record: MemoryRecord) -> dict[str, Any]:
    """The LangGraph entry of a record's metadata ({} for a record recallwise itself wrote)."""
    saved = record.metadata.get(META) if isinstance(record.metadata, dict) else None
    return saved if isinstance(saved, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def is_live(record: MemoryRecord, now: float) -> bool:
    expires = _number(saved_entry(record).get("expires_at"))
    return expires is None or expires > now


def is_indexed(record: MemoryRecord) -> bool:
    return saved_entry(record).get("indexed", True) is not False


def renewal(record: MemoryRecord, now: float) -> float | None:
    """The new expiry of a live item with a TTL that was just read, or None when there is
    nothing to write (no TTL, expired, or a renewal smaller than the slack)."""
    saved = saved_entry(record)
    minutes = _number(saved.get("ttl_minutes"))
    if minutes is None or not is_live(record, now):
        return None
    expires = now + 60.0 * minutes
    before = _number(saved.get("expires_at"))
    if before is not None and expires - before < 60.0 * minutes * _REFRESH_SLACK:
        return None
    return expires


def positive_minutes(value: Any, what: str) -> float:
    minutes = _number(value)
    if minutes is None or not math.isfinite(minutes) or minutes <= 0:
        raise ValueError(f"{what} must be a positive number of minutes, got {value!r}")
    return minutes


def check_ttl(ttl: Any) -> None:
    if ttl is not None:
        positive_minutes(ttl, "ttl")


def checked_ttl_config(config: TTLConfig | None) -> TTLConfig | None:
    """A copy of ``config`` when its keys hold what LangGraph's TTLConfig says; else one
    ValueError naming the key."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ValueError(f"ttl must be a TTLConfig dict, got {type(config).__name__}")
    unknown = sorted(set(config) - set(_TTL_KEYS))
    if unknown:
        raise ValueError(f"unknown TTLConfig key(s) {', '.join(unknown)} (known: {', '.join(_TTL_KEYS)})")
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in config and not isinstance(config[flag], bool):
            raise ValueError(f"TTLConfig {flag} must be True or False, got {config[flag]!r}")
    if config.get("omit_expired") is False:
        raise ValueError(
            "TTLConfig omit_expired=False is not supported: RecallwiseStore never returns expired items"
        )
    for minutes in ("default_ttl", "sweep_interval_minutes"):
        if config.get(minutes) is not None:
            positive_minutes(config.get(minutes), f"TTLConfig {minutes}")
    return TTLConfig(**config)  # a copy: the caller's dict may change later
