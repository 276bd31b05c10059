"""Agno's MemoryManager gated: the system prompt of a real ``Agent`` (a scripted model, a real
agno db holding the demo persona as user memories) shows only the memories the gate and judge keep
for the run's message, one decision a run; Agno's memory writing is unchanged."""

from __future__ import annotations

import asyncio
import copy

import pytest

from recallwise.demo import persona_records
from recallwise.testing import ScriptedDecider

agno = pytest.importorskip("agno")

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.memory import UserMemory  # noqa: E402
from agno.models.base import Model  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402

from recallwise.integrations.agno import AgnoMemoryGate, GatedMemoryManager  # noqa: E402

ACTOR = "demo_user"
HELLO, DINNER = "Hello!", "What should I have for dinner?"
DIET = ("vegetarian", "Vietnamese")
UNRELATED = ("aisle seat", "YVR", "four spaces")
OPEN, CLOSE = "<memories_from_previous_interactions>", "</memories_from_previous_interactions>"


class Scripted(Model):
    """A model that answers "ok" and keeps each request's system prompt."""

    def __init__(self) -> None:
        super().__init__(id="scripted", name="scripted", provider="scripted")
        self.systems: list[str] = []

    def invoke(self, *args, messages=None, **kwargs):
        self.systems.append("\n".join(str(m.content or "") for m in messages or [] if m.role == "system"))
        return ModelResponse(role="assistant", content="ok")

    async def ainvoke(self, *args, **kwargs):
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args, **kwargs):  # pragma: no cover
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args, **kwargs):  # pragma: no cover
        yield self.invoke(*args, **kwargs)

    def _parse_provider_response(self, response, **kwargs):
        return response

    def _parse_provider_response_delta(self, response):
        return response


def _persona_texts() -> list[str]:
    texts = []
    for record in persona_records(ACTOR):
        if record.text not in texts and not record.text.startswith("{"):
            texts.append(record.text)
    return texts


def _agent(gate: AgnoMemoryGate) -> tuple[Agent, Scripted, GatedMemoryManager]:
    db = InMemoryDb()
    manager = GatedMemoryManager(db=db, gate=gate)
    for text in _persona_texts():
        manager.add_user_memory(UserMemory(memory=text), user_id=ACTOR)
    model = Scripted()
    agent = Agent(
        model=model,
        db=db,
        memory_manager=manager,
        add_memories_to_context=True,
        update_memory_on_run=False,  # no memory-writing model call: the scripted model answers once a run
        telemetry=False,
    )
    return agent, model, manager


def _memories_shown(system: str) -> list[str]:
    if OPEN not in system:
        return []
    block = system.split(OPEN, 1)[1].split(CLOSE, 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def _run(agent: Agent, model: Scripted, messages: list[str], *, session: str = "s1") -> list[str]:
    shown = []
    for message in messages:
        before = len(model.systems)
        agent.run(message, user_id=ACTOR, session_id=session)
        assert len(model.systems) == before + 1
        shown.append(model.systems[-1])
    return shown


def test_hello_shows_no_memories_and_dinner_shows_the_diet_only():
    agent, model, manager = _agent(AgnoMemoryGate())
    hello, dinner = _run(agent, model, [HELLO, DINNER])
    assert _memories_shown(hello) == []
    kept = _memories_shown(dinner)
    assert any(word in line for line in kept for word in DIET), dinner
    assert not any(word in line for line in kept for word in UNRELATED), kept
    assert manager.gate.stats.turns == 2


def test_the_stock_arm_shows_every_memory():
    agent, model, _ = _agent(AgnoMemoryGate(decider=None))
    (hello,) = _run(agent, model, [HELLO])
    assert sorted(_memories_shown(hello)) == sorted(_persona_texts())


def test_a_failing_decider_shows_agnos_stock_memories_and_is_counted():
    gate = AgnoMemoryGate(decider=ScriptedDecider(error=RuntimeError("decider down")))
    agent, model, _ = _agent(gate)
    (dinner,) = _run(agent, model, [DINNER])
    assert sorted(_memories_shown(dinner)) == sorted(_persona_texts())
    assert gate.stats.decider_errors >= 1


def test_a_decision_that_raises_shows_every_memory_and_is_counted(monkeypatch):
    gate = AgnoMemoryGate()
    agent, model, _ = _agent(gate)

    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(gate, "_ask_policy", broken)
    (dinner,) = _run(agent, model, [DINNER])
    assert sorted(_memories_shown(dinner)) == sorted(_persona_texts())
    assert gate.fallbacks == 1


def test_one_run_is_one_decision_however_often_the_prompt_is_built():
    from agno.run.base import RunContext
    from agno.session import AgentSession

    gate = AgnoMemoryGate()
    agent, _, _ = _agent(gate)
    session = AgentSession(session_id="s1", user_id=ACTOR)
    prompts = []
    for _ in range(3):  # one run (one run_id) whose system prompt Agno builds three times
        context = RunContext(run_id="run-1", session_id="s1", user_id=ACTOR)
        message = agent.get_system_message(session=session, run_context=context, input=DINNER)
        assert message is not None
        prompts.append(_memories_shown(str(message.content)))
    assert gate.stats.turns == 1
    assert prompts[0] and prompts[0] == prompts[1] == prompts[2]
    context = RunContext(run_id="run-2", session_id="s1", user_id=ACTOR)
    agent.get_system_message(session=session, run_context=context, input=DINNER)
    assert gate.stats.turns == 2  # the next run is another user turn, decided anew


def test_the_async_run_is_gated_too():
    agent, model, _ = _agent(AgnoMemoryGate())

    async def turns() -> list[str]:
        shown = []
        for message in (HELLO, DINNER):
            await agent.arun(message, user_id=ACTOR, session_id="s-async")
            shown.append(model.systems[-1])
        return shown

    hello, dinner = asyncio.run(turns())
    assert _memories_shown(hello) == []
    kept = _memories_shown(dinner)
    assert kept and not any(word in line for line in kept for word in UNRELATED), kept


def test_memory_writing_and_reading_outside_the_prompt_are_agnos():
    agent, model, manager = _agent(AgnoMemoryGate())
    _run(agent, model, [HELLO])
    assert len(manager.get_user_memories(user_id=ACTOR) or []) == len(_persona_texts())
    assert len(agent.get_user_memories(user_id=ACTOR) or []) == len(_persona_texts())
    manager.add_user_memory(
        UserMemory(memory="The user is cooking a mushroom risotto tonight."), user_id=ACTOR
    )
    assert len(manager.get_user_memories(user_id=ACTOR) or []) == len(_persona_texts()) + 1
    (dinner,) = _run(agent, model, ["What should I cook for dinner tonight?"])
    assert any("risotto" in line or "vegetarian" in line for line in _memories_shown(dinner)), dinner


def test_a_copied_manager_shares_its_gate():
    gate = AgnoMemoryGate()
    manager = GatedMemoryManager(gate=gate)  # as Agno's AgentOS copies an agent per request
    copied = copy.deepcopy(manager)
    assert copied is not manager and copied.gate is gate
    with pytest.raises(TypeError, match="AgnoMemoryGate"):
        GatedMemoryManager(gate=object())  # type: ignore[arg-type]


def test_a_teams_system_prompt_is_gated_too():
    from agno.team import Team

    gate = AgnoMemoryGate()
    member, _, manager = _agent(gate)
    leader = Scripted()
    team = Team(
        members=[member],
        model=leader,
        db=manager.db,
        memory_manager=manager,
        add_memories_to_context=True,
        update_memory_on_run=False,
        telemetry=False,
    )
    shown = []
    for message in (HELLO, DINNER):
        team.run(message, user_id=ACTOR, session_id="s-team")
        shown.append(leader.systems[-1])
    assert OPEN not in shown[0]
    kept = _memories_shown(shown[1])
    assert any(word in line for line in kept for word in DIET), shown[1]
    assert not any(word in line for line in kept for word in UNRELATED), kept
