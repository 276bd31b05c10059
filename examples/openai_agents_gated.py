"""Gated long-term memory for an OpenAI Agents SDK agent, offline.

    python examples/openai_agents_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]

A real ``agents.Agent`` run by ``Runner.run`` with a scripted model (no API key, no network), two
user turns in one conversation: "Hello!" and "What should I have for dinner?". Memory comes from a
recallwise store through ``RunConfig.call_model_input_filter=GatedInputFilter(store, ...)``:
the gate decides once per user turn, and the kept records go into that call's instructions only.
``--stock`` runs the control arm (``decider=None``: recall on every turn). Seed a store first with
``recallwise demo --store URL``.

Needs: pip install 'recallwise[openai-agents]'.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

from _two_turns import TURNS, arguments, report

from recallwise.extras import exit_without_extra

exit_without_extra("openai-agents", "examples/openai_agents_gated.py")

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

import recallwise
from recallwise.integrations import CountingSearcher
from recallwise.integrations.openai_agents import GatedInputFilter


class ScriptedModel(Model):
    """Stands in for an OpenAI model: replies "ok" and keeps the instructions of every call."""

    def __init__(self) -> None:
        self.instructions: list[str | None] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
    ) -> Any:
        self.instructions.append(system_instructions)
        text = ResponseOutputText(type="output_text", text="ok", annotations=[])
        message = ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
        raise NotImplementedError


async def run(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    store = CountingSearcher(recallwise.open_store(store_url))
    memory = GatedInputFilter(store, actor_id=actor, **({"decider": None} if stock else {}))
    model = ScriptedModel()
    agent = Agent(name="assistant", instructions="You are a helpful assistant.", model=model)
    config = RunConfig(call_model_input_filter=memory, tracing_disabled=True)
    turns, history = [], []
    for message in TURNS:
        searches, before = store.searches, len(model.instructions)
        result = await Runner.run(agent, [*history, {"role": "user", "content": message}], run_config=config)
        history = result.to_input_list()
        shown = "\n".join(i or "" for i in model.instructions[before:])
        recall = memory.last_recall
        records = [k.text for k in recall.records] if recall is not None and recall.context in shown else []
        turns.append({"message": message, "records": records, "searches": store.searches - searches})
    memory.close()
    store.close()
    return {"framework": "openai-agents", "version": version("openai-agents"), "stock": stock, "turns": turns}


def main() -> None:
    args = arguments(__doc__, "the control arm: recall on every turn")
    report(asyncio.run(run(args.store, args.actor, args.stock)), as_json=args.json)


if __name__ == "__main__":
    main()
