"""conftest for CrewAI's own memory tests (its sdist's ``tests/memory``) with recallwise's gate
substituted: ``crewai.memory.unified_memory.Memory`` (and the names that re-export it) become a
:class:`~recallwise.integrations.crewai.GatedMemory` subclass. ``RECALLWISE_CREWAI_MODE`` says which
gate: ``none`` (transparent: ``decider=None``) or ``open`` (a decider that opens the gate and keeps
every record: the judge's path, CrewAI's order). .ci/crewai.sh copies it in as ``conftest.py``; it is
not a test module of this project (pytest collects only ``test_*.py``)."""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import crewai
import crewai.flow.flow  # noqa: F401
import crewai.memory.unified_memory as unified

from recallwise.integrations.crewai import CrewMemoryGate, GatedMemory

MODE = os.environ.get("RECALLWISE_CREWAI_MODE", "open")


class AlwaysOpen:
    """A decider that opens the gate and keeps every record."""

    name = "always-open"

    def ask(self, state: str, questions: dict[str, Any]) -> dict[str, float]:
        return dict.fromkeys(questions, 1.0)


class UpstreamGated(GatedMemory):
    """The gated memory upstream's tests construct wherever they say ``Memory(...)``."""

    def model_post_init(self, __context: Any) -> None:
        if self.gate is None:
            self.gate = CrewMemoryGate(decider=None if MODE == "none" else AlwaysOpen())
        super().model_post_init(__context)


# every CrewAI module that bound the name (a Flow builds its default memory from its own import)
_ORIGINAL = unified.Memory
for _name, _module in list(sys.modules.items()):
    if (_name == "crewai" or _name.startswith("crewai.")) and getattr(_module, "Memory", None) is _ORIGINAL:
        _module.Memory = UpstreamGated  # type: ignore[attr-defined]
