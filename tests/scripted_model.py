"""A scripted Strands model for tests: answers from a script, records every message list it is sent.

Strands runs offline with it (no model provider). Import it after ``pytest.importorskip("strands")``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from strands.models.model import Model

__all__ = ["ScriptedModel"]


class ScriptedModel(Model):
    """Answers from a script; records every message list it is sent (deep copies)."""

    def __init__(self, replies: list[list[dict[str, Any]]] | None = None) -> None:
        self.config: dict[str, Any] = {}
        self.replies = list(replies or [])
        self.calls: list[list[dict[str, Any]]] = []

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    async def structured_output(self, *args: Any, **kwargs: Any):  # pragma: no cover - unused
        raise NotImplementedError
        yield

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs: Any):
        self.calls.append(copy.deepcopy(messages))
        reply = self.replies.pop(0) if self.replies else [{"text": "ok"}]
        yield {"messageStart": {"role": "assistant"}}
        stop = "end_turn"
        for block in reply:
            if "toolUse" in block:
                use = block["toolUse"]
                start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                yield {"contentBlockStart": {"start": start}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
                stop = "tool_use"
            else:
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": stop}}

    def last_user_text(self, call: int = -1) -> str:
        messages = self.calls[call]
        users = [m for m in messages if m["role"] == "user" and any("text" in b for b in m["content"])]
        return " ".join(b.get("text", "") for b in users[-1]["content"])
