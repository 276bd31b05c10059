"""gated_injection: the ``MemoryInjectionConfig`` that renders a gate's kept entries, best first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strands.memory import MemoryEntry, MemoryInjectionConfig
from strands.memory.types import InjectionFormatContext, InjectionQueryContext

from ...policy import message_text, pack_context
from ...records import render_text
from .gate import GatedMemoryStore


def gated_injection(
    stores: Sequence[Any] = (),
    *,
    max_entries: int = 5,
    trigger: Any = "userTurn",
    max_record_chars: int = 600,
    max_context_chars: int = 4000,
) -> MemoryInjectionConfig:
    """A ``MemoryInjectionConfig`` for gated stores.

    * ``query``: the text of the user's latest message; ``None`` (no injection, no search) when it
      has none (a tool result, an image);
    * ``format``: the kept entries as recallwise's ``<user_context>`` block (memory text escaped,
      JSON preference records rendered as prose, duplicates dropped, within ``max_context_chars``),
      ordered by the judge's probability across the gated ``stores`` given, best first;
    * ``trigger`` and ``max_entries`` as in Strands (``"userTurn"``, 5).
    """
    gates = list({id(s.gate): s.gate for s in stores if isinstance(s, GatedMemoryStore)}.values())

    def query(context: InjectionQueryContext, **_: Any) -> str | None:
        for message in reversed(context.messages):
            if message.get("role") == "user":
                text = message_text(message)
                if text.strip():
                    return text
        return None

    def render(context: InjectionFormatContext, **_: Any) -> str:
        judged: dict[tuple[str, str], float | None] = {}
        for gate in gates:
            judged.update(gate.last_kept)

        def best_first(entry: MemoryEntry) -> float:
            p = judged.get((entry.store_name or "", entry.content))
            return -p if p is not None else 0.0

        entries = sorted(context.entries, key=best_first)
        block, _included = pack_context(
            [render_text(e.content) for e in entries],
            max_record_chars=max_record_chars,
            max_context_chars=max_context_chars,
        )
        return block

    return MemoryInjectionConfig(trigger=trigger, max_entries=max_entries, query=query, format=render)
