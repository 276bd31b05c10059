"""llm: an OpenAI-compatible chat/completions server with logprobs, answering in-process.

The fake speaks the wire format through ``httpx.MockTransport``; its slow-server timeout is
in ``test_http_sockets.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from recallwise.deciders.llm import LLMDecider, build_prompt, distribution
from recallwise.deciders.questions import ChoiceAnswer, Question, ScoreAnswer
from recallwise.errors import DeciderBadResponse, DeciderUnavailable, UsageError
from wire_servers import WireFake, llm_fake

QUESTIONS = {
    "gate": {
        "type": "noul",
        "instructions": "Does the user want a drink?",
        "criteria": {"true": "asks for a drink", "false": "anything else"},
    },
    "topic": {
        "type": "choice",
        "instructions": "Topic?",
        "criteria": {"drink": "beverages", "code": "software"},
    },
    "level": {"type": "score", "instructions": "How urgent?", "criteria": ["low", "mid", "high"]},
}


@pytest.fixture
def server() -> WireFake:
    return llm_fake(api_key="local-key")


@pytest.fixture
def llm(server: WireFake) -> Iterator[LLMDecider]:
    d = LLMDecider(
        server.url + "/v1", model="fake", api_key="local-key", timeout=2.0, transport=server.transport()
    )
    yield d
    d.close()


def test_noul_is_the_yes_share_of_the_yes_no_mass(llm: LLMDecider, server: WireFake) -> None:
    answers = llm.ask("I want a drink now", QUESTIONS)
    assert answers["gate"] == pytest.approx(0.85, abs=1e-6)  # the fake model: shared word "drink"
    assert llm.ask("Hello there", QUESTIONS)["gate"] == pytest.approx(0.2, abs=1e-6)
    sent = server.received[-1]
    assert sent.headers["authorization"] == "Bearer local-key"
    assert sent.body["max_tokens"] == 1 and sent.body["logprobs"] is True and sent.body["top_logprobs"] == 20
    assert sent.body["model"] == "fake"


def test_choice_and_score_read_the_label_tokens(llm: LLMDecider) -> None:
    answers = llm.ask("I want a drink now", QUESTIONS)
    topic, level = answers["topic"], answers["level"]
    assert isinstance(topic, ChoiceAnswer) and topic.choice == "drink"
    assert topic.probabilities["drink"] == pytest.approx(0.8, abs=1e-6)
    assert isinstance(level, ScoreAnswer) and math.isclose(sum(level.probabilities), 1.0)


def test_chat_mode_sends_one_request_per_question(llm: LLMDecider, server: WireFake) -> None:
    assert llm.usage() == {"calls": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0}
    decision = llm.decide("a drink?", QUESTIONS)
    assert server.count == 3
    # The fake reports the prompt's words as input tokens and one output token per request.
    words = sum(len(r.body["messages"][-1]["content"].split()) for r in server.received)
    assert decision.usage == {"requests": 3, "input_tokens": words, "output_tokens": 3}
    assert llm.usage() == {"calls": 1, "requests": 3, "input_tokens": words, "output_tokens": 3}


def test_completions_mode_sends_one_request_for_all_questions(server: WireFake) -> None:
    with_batch = LLMDecider(
        server.url, model="fake", api_key="local-key", mode="completions", transport=server.transport()
    )
    decision = with_batch.decide("I want a drink now", QUESTIONS)
    assert server.count == 1
    assert server.received[-1].path == "/v1/completions"
    assert len(server.received[-1].body["prompt"]) == 3
    assert decision.answers["gate"] == pytest.approx(0.85, abs=1e-6)
    assert decision.usage == {"requests": 1, "input_tokens": 30, "output_tokens": 3}


def test_completions_mode_with_a_missing_completion_is_an_error(server: WireFake) -> None:
    server.fail("missing_answer")
    d = LLMDecider(
        server.url, model="fake", api_key="local-key", mode="completions", transport=server.transport()
    )
    with pytest.raises(DeciderBadResponse, match="3 prompts sent, 2 completions"):
        d.ask("drink", QUESTIONS)


def test_no_allowed_token_among_the_top_logprobs_is_an_error(llm: LLMDecider, server: WireFake) -> None:
    server.fail("missing_answer")  # the server's top tokens hold only chatter
    with pytest.raises(DeciderBadResponse, match="none of the allowed answers") as info:
        llm.ask("drink", {"gate": QUESTIONS["gate"]})
    assert info.value.backend_kind == "no_answer_token"


def test_errors_are_typed(llm: LLMDecider, server: WireFake) -> None:
    server.fail("status", status=503, message="model loading")
    with pytest.raises(DeciderUnavailable, match="model loading"):
        llm.ask("drink", QUESTIONS)
    server.fail("truncated_json")
    with pytest.raises(DeciderBadResponse, match="not valid JSON"):
        llm.ask("drink", QUESTIONS)
    server.heal()
    with pytest.raises(DeciderUnavailable, match="invalid api key") as info:
        LLMDecider(server.url, model="fake", api_key="wrong", transport=server.transport()).ask(
            "drink", QUESTIONS
        )
    assert info.value.status == 401
    assert llm.usage()["calls"] == 0  # no call was answered


def test_distribution_adds_up_token_variants() -> None:
    probs = distribution(
        [(" yes", math.log(0.5)), ("Yes", math.log(0.2)), ("no", math.log(0.1)), ("Maybe", math.log(0.2))],
        ("yes", "no"),
        "q",
    )
    assert probs == pytest.approx([0.7 / 0.8, 0.1 / 0.8])
    assert distribution([("A.", -0.1), ("(B", -2.0)], ("A", "B"), "q")[0] > 0.8


def test_prompts_label_many_options_with_numbers() -> None:
    many = Question("choice", "Pick", {f"opt{i}": "" for i in range(30)})
    prompt = build_prompt("state", many)
    assert prompt.labels[0] == "1" and prompt.labels[-1] == "30" and "30. opt29" in prompt.text
    few = build_prompt("state", Question("choice", "Pick", {"a": "first", "b": ""}))
    assert few.labels == ("A", "B") and "A. a - first" in few.text
    noul = build_prompt("<b>state</b>", Question("noul", "Is it?", {"true": "T", "false": "F"}))
    assert 'Answer "yes" if: T' in noul.text and noul.labels == ("yes", "no")


def test_configuration_is_checked() -> None:
    with pytest.raises(UsageError, match="needs a URL"):
        LLMDecider()
    with pytest.raises(UsageError, match="mode"):
        LLMDecider("http://x", mode="stream")  # type: ignore[arg-type]
    assert LLMDecider("http://x:1/v1").endpoint == "http://x:1/v1/chat/completions"
    assert LLMDecider("http://x:1").endpoint == "http://x:1/v1/chat/completions"
    assert LLMDecider("http://x:1/v1", mode="completions").endpoint == "http://x:1/v1/completions"
