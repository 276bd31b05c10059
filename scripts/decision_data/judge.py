"""Judge sets (filled in below)."""

from __future__ import annotations

from typing import Any


def build(snap: Any, gate_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return []
