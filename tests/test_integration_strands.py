"""RecallHook and RecallSessionManager with a real strands.Agent and a scripted model."""

from __future__ import annotations

import json

import pytest

strands = pytest.importorskip("strands")

from strands import Agent, tool  # noqa: E402
from strands.session.file_session_manager import FileSessionManager  # noqa: E402

from recallwise import RecallPolicy  # noqa: E402
from recallwise.demo import DEMO_NAMESPACES, seed_persona  # noqa: E402
from recallwise.errors import DeciderUnavailable  # noqa: E402
from recallwise.integrations.strands import RecallHook, RecallSessionManager, user_text  # noqa: E402
from recallwise.testing import ScriptedDecider  # noqa: E402
from scripted_model import ScriptedModel  # noqa: E402

DRINK = "I'd like a drink, what should I get?"


@pytest.fixture
def persona_store(real_store):
    seed_persona(real_store)
    return real_store


@pytest.fixture
def policy(persona_store):
    return RecallPolicy(persona_store, namespaces=DEMO_NAMESPACES)


def context_blocks(messages) -> int:
    return sum("<user_context>" in b.get("text", "") for m in messages for b in m["content"])


def test_context_reaches_the_model_on_memory_turns_only_and_never_the_history(policy):
    model = ScriptedModel()
    hook = RecallHook(policy, actor_id="demo_user", session_id="s1")
    agent = Agent(model=model, hooks=[hook], callback_handler=None)
    agent("Hello!")
    assert "<user_context>" not in model.last_user_text()
    assert hook.last_recall is not None and not hook.last_recall.retrieved
    agent(DRINK)
    seen = model.last_user_text()
    assert seen.startswith("<user_context>") and "flat white" in seen.lower() and seen.endswith(DRINK)
    agent("What should I have for dinner?")
    assert "vegetarian" in model.last_user_text()
    # one block per model call, only in the current turn: earlier turns went back to what was said
    assert context_blocks(model.calls[-1]) == 1
    assert context_blocks(agent.messages) == 0
    assert [m["content"][0]["text"] for m in agent.messages if m["role"] == "user"] == [
        "Hello!",
        DRINK,
        "What should I have for dinner?",
    ]
    assert policy.stats.turns == 3 and policy.stats.gate_closed == 1


@tool
def check_weather(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def test_a_tool_turn_keeps_its_context_for_every_model_call_and_recalls_once(policy):
    model = ScriptedModel(
        [
            [{"toolUse": {"toolUseId": "t1", "name": "check_weather", "input": {"city": "Vancouver"}}}],
            [{"text": "Sunny; get an iced decaf."}],
        ]
    )
    agent = Agent(model=model, tools=[check_weather], hooks=[RecallHook(policy, actor_id="demo_user")])
    agent(DRINK)
    assert len(model.calls) == 2
    # the tool result is a user-role message with no text: no second recall, same context
    assert policy.stats.turns == 1
    for call in model.calls:
        assert context_blocks(call) == 1
        assert "toolResult" in json.dumps(call) or call is model.calls[0]
    assert context_blocks(agent.messages) == 0
    assert agent.messages[0]["content"] == [{"text": DRINK}]


def test_messages_whose_first_block_is_not_text(policy):
    model = ScriptedModel()
    agent = Agent(model=model, hooks=[RecallHook(policy, actor_id="demo_user")], callback_handler=None)
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}
    agent([image, {"text": DRINK}])
    first = model.calls[-1][-1]["content"]
    assert "<user_context>" in first[0]["text"] and first[1] == image and first[2] == {"text": DRINK}
    agent([image])  # nothing to recall for: no text
    assert policy.stats.turns == 1
    assert context_blocks(agent.messages) == 0
    assert user_text({"role": "user", "content": [{"toolResult": {"content": [{"text": "x"}]}}]}) == ""


def test_a_session_manager_never_persists_the_context(policy, tmp_path):
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    agent = Agent(
        model=ScriptedModel(),
        session_manager=manager,
        hooks=[RecallHook(policy, actor_id="demo_user")],
        callback_handler=None,
    )
    agent(DRINK)
    stored = " ".join(p.read_text() for p in tmp_path.rglob("message_*.json"))
    assert DRINK.replace("'", "") in stored.replace("'", "") and "user_context" not in stored


def test_a_failing_decider_fails_open_and_is_counted(persona_store):
    policy = RecallPolicy(
        persona_store,
        decider=ScriptedDecider.failing(DeciderUnavailable("connection refused")),
        namespaces=DEMO_NAMESPACES,
    )
    model = ScriptedModel()
    Agent(model=model, hooks=[RecallHook(policy, actor_id="demo_user")], callback_handler=None)("Hello!")
    assert "<user_context>" in model.last_user_text()  # fail open: retrieve and keep everything
    assert policy.stats.decider_errors >= 1 and "decider:unavailable" in policy.stats.errors_by_kind


def test_recall_hook_refuses_unsafe_ids(policy):
    with pytest.raises(ValueError, match="actor_id"):
        RecallHook(policy, actor_id="../other")


# ---- RecallSessionManager -----------------------------------------------------------------


def test_session_manager_persists_extracts_and_restores(real_store):
    policy = RecallPolicy(real_store, namespaces=DEMO_NAMESPACES)
    model = ScriptedModel()
    manager = RecallSessionManager(real_store, policy, actor_id="u7", session_id="trip")
    agent = Agent(model=model, session_manager=manager, callback_handler=None)
    agent("I'm vegetarian, and I always book an aisle seat.")
    events = real_store.list_events("u7", "trip")
    assert [(e.role, e.text) for e in events] == [
        ("user", "I'm vegetarian, and I always book an aisle seat."),
        ("assistant", "ok"),
    ]
    facts = sorted(r.text for r in real_store.list_records("/facts/u7"))
    assert facts == ["The user always books an aisle seat.", "The user is vegetarian."]
    assert manager.extractions[-1].added == 3 and not manager.extraction_errors

    # the next turn recalls what was just learned, and the stored events stay clean
    agent("I'm booking a flight next week, anything you should know?")
    assert "aisle seat" in model.last_user_text()
    assert all("user_context" not in e.text for e in real_store.list_events("u7"))
    assert all("user_context" not in json.dumps(e.metadata) for e in real_store.list_events("u7"))

    # a new agent in the same session starts with the conversation so far
    again = RecallSessionManager(real_store, policy, actor_id="u7", session_id="trip", extractor=None)
    restored = Agent(model=ScriptedModel(), session_manager=again, callback_handler=None)
    assert [m["content"][0]["text"] for m in restored.messages] == [
        "I'm vegetarian, and I always book an aisle seat.",
        "ok",
        "I'm booking a flight next week, anything you should know?",
        "ok",
    ]


def test_session_manager_applies_redactions_on_restore(store):
    policy = RecallPolicy(store, decider=None, namespaces=DEMO_NAMESPACES)
    manager = RecallSessionManager(store, policy, actor_id="u8", session_id="s", extractor=None)
    agent = Agent(model=ScriptedModel(), session_manager=manager, callback_handler=None)
    agent("My card number is 4111 1111 1111 1111")
    redacted = {"role": "assistant", "content": [{"text": "[redacted]"}]}
    manager.redact_latest_message(redacted, agent)
    fresh = RecallSessionManager(store, policy, actor_id="u8", session_id="s", extractor=None)
    assert fresh.stored_messages(agent.agent_id)[-1] == redacted


def test_session_manager_survives_a_failing_extractor(store):
    class Broken:
        name = "broken"

        def extract(self, events):
            raise RuntimeError("model unavailable")

    policy = RecallPolicy(store, decider=None, namespaces=DEMO_NAMESPACES)
    manager = RecallSessionManager(store, policy, actor_id="u9", session_id="s", extractor=Broken())
    Agent(model=ScriptedModel(), session_manager=manager, callback_handler=None)("I'm vegetarian.")
    assert manager.extraction_errors == ["RuntimeError: model unavailable"]
    assert store.count_records() == 0 and len(store.list_events("u9")) == 2
