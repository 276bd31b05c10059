"""One contract, every backend that can run here.

Real peers where they exist (the embedded decider, sparrow-decider in-process, and the
``systemone`` backend against a real ``sparrow-decider serve`` on loopback); fakes speaking
the documented wire formats for OpenRouter, SageMaker and OpenAI-compatible LLMs, answering
in-process (``httpx.MockTransport``, botocore ``before-send``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bad_questions import BAD_REQUESTS
from recallwise.deciders import BaseDecider, ChoiceAnswer, Question, ScoreAnswer, make_decider
from recallwise.deciders import ask as policy_ask
from recallwise.deciders.wire import normalise_answers
from recallwise.errors import QuestionError
from wire_servers import (
    WireFake,
    fake_answers,
    llm_fake,
    openrouter_fake,
    sagemaker_fake,
    sparrow_serve,
    systemone_fake,
)

pytest.importorskip("sparrow_decider", reason="sparrow-decider is in the dev extra")

STATE = "I'd like a drink, what should I get? Something with tea maybe."
QUESTIONS: dict[str, Any] = {
    "gate": {
        "type": "noul",
        "instructions": "Is the user asking for a drink recommendation?",
        "criteria": {"true": "asks for a recommendation", "false": "small talk"},
    },
    "topic": {
        "type": "choice",
        "instructions": "What is the message about?",
        "criteria": {"drink": "beverages", "travel": "trips", "code": "programming"},
    },
    "personal": {
        "type": "score",
        "instructions": "How personal is it?",
        "criteria": ["not", "somewhat", "very"],
    },
}


@pytest.fixture(scope="module")
def sparrow_url() -> Iterator[str]:
    with sparrow_serve() as url:
        yield url


FAKES = {
    "systemone-wire": systemone_fake,
    "openrouter": lambda: openrouter_fake("sk-or-test"),
    "sagemaker": sagemaker_fake,
    "llm-chat": llm_fake,
    "llm-completions": llm_fake,
}


@dataclass
class Backend:
    decider: Any
    server: WireFake | None
    #: requests one ask() makes for len(QUESTIONS) questions (None: no server to count)
    requests_per_call: int | None
    #: answers come from wire_servers.fake_answers (so they are known exactly)
    fake: bool


def _sagemaker(server: WireFake) -> Any:
    boto3 = pytest.importorskip("boto3", reason="boto3 comes with the dev extra (strands-agents)")
    session = boto3.Session(
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", region_name="us-east-1"
    )
    decider = make_decider("sagemaker", url="sagemaker://decider-endpoint?region=us-east-1", session=session)
    decider.client.meta.events.register("before-send.sagemaker-runtime.InvokeEndpoint", server.before_send())
    return decider


BACKENDS = [
    "embedded",
    "sparrow",
    "systemone-real",
    "systemone-wire",
    "openrouter",
    "sagemaker",
    "llm-chat",
    "llm-completions",
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    name = request.param
    server = FAKES[name]() if name in FAKES else None
    if name == "embedded":
        yield Backend(make_decider("embedded"), None, None, False)
        return
    if name == "sparrow":
        yield Backend(make_decider("sparrow"), None, None, False)
        return
    if name == "systemone-real":
        yield Backend(
            make_decider("systemone", url=request.getfixturevalue("sparrow_url")), None, None, False
        )
        return
    assert server is not None
    transport = server.transport() if name != "sagemaker" else None
    if name == "systemone-wire":
        decider = make_decider("systemone", url=server.url, transport=transport)
        per_call = 1
    elif name == "openrouter":
        decider = make_decider(
            "openrouter", url=server.url + "/api/alpha/decisions", api_key="sk-or-test", transport=transport
        )
        per_call = 1
    elif name == "sagemaker":
        decider = _sagemaker(server)
        per_call = 1
    elif name == "llm-chat":
        decider = make_decider("llm", url=server.url + "/v1", model="fake", transport=transport)
        per_call = len(QUESTIONS)  # chat takes one prompt per request: one per question, concurrently
    else:
        decider = make_decider("llm", url=server.url, model="fake", mode="completions", transport=transport)
        per_call = 1
    yield Backend(decider, server, per_call, True)
    decider.close()


def _check_shapes(answers: dict[str, Any]) -> None:
    assert set(answers) == set(QUESTIONS)
    gate, topic, personal = answers["gate"], answers["topic"], answers["personal"]
    assert isinstance(gate, float) and 0.0 <= gate <= 1.0
    assert isinstance(topic, ChoiceAnswer)
    assert topic.choice in QUESTIONS["topic"]["criteria"]
    assert set(topic.probabilities) <= set(QUESTIONS["topic"]["criteria"])
    assert math.isclose(sum(topic.probabilities.values()), 1.0, abs_tol=0.01)
    assert 0.0 <= topic.confidence <= 1.0
    assert isinstance(personal, ScoreAnswer)
    assert 0 <= personal.score < 3 and len(personal.probabilities) == 3
    assert personal.probabilities[personal.score] == max(personal.probabilities)
    assert math.isclose(sum(personal.probabilities), 1.0, abs_tol=0.01)


def test_answers_every_question_in_the_contract_shapes(backend: Backend) -> None:
    before = backend.server.count if backend.server else 0
    answers = backend.decider.ask(STATE, QUESTIONS)
    _check_shapes(answers)
    if backend.server is not None:
        assert backend.server.count - before == backend.requests_per_call
    if backend.fake:
        # The wire server's model is known: the backend must decode exactly its answers.
        expected = normalise_answers(
            "fake", {n: Question(**_q(q)) for n, q in QUESTIONS.items()}, fake_answers(STATE, QUESTIONS)
        )
        assert answers["gate"] == pytest.approx(expected["gate"]["noul"], abs=1e-3)
        assert answers["topic"].choice == expected["topic"]["choice"]
        for option, p in expected["topic"]["probabilities"].items():
            assert answers["topic"].probabilities[option] == pytest.approx(p, abs=1e-3)
        assert answers["personal"].probabilities == pytest.approx(
            expected["personal"]["probabilities"], abs=1e-3
        )


def _q(wire: dict[str, Any]) -> dict[str, Any]:
    criteria = wire.get("criteria")
    return {**wire, "criteria": tuple(criteria) if isinstance(criteria, list) else criteria}


def test_policy_call_with_question_objects(backend: Backend) -> None:
    questions = {n: Question(**_q(q)) for n, q in QUESTIONS.items()}
    _check_shapes(policy_ask(backend.decider, STATE, questions))


@pytest.mark.parametrize(("state", "questions", "says"), BAD_REQUESTS)
def test_bad_requests_are_refused_before_any_network_call(
    backend: Backend, state: str, questions: dict[str, Any], says: str
) -> None:
    before = backend.server.count if backend.server else 0
    with pytest.raises(QuestionError, match=says):
        backend.decider.ask(state, questions)
    if backend.server is not None:
        assert backend.server.count == before


#: what each backend adds up in usage(), besides calls (tokens as the server reports them)
USAGE_KEYS = {
    "embedded": set(),
    "sparrow": set(),
    "systemone-real": {"input_tokens", "output_tokens"},
    "systemone-wire": {"input_tokens", "output_tokens"},
    "openrouter": {"input_tokens", "output_tokens", "cost_usd"},
    "sagemaker": set(),
    "llm-chat": {"requests", "input_tokens", "output_tokens"},
    "llm-completions": {"requests", "input_tokens", "output_tokens"},
}
#: keys a backend adds only after some kinds of call (the embedded decider counts the records it judged
#: with its multilingual model, and the gate and judge questions its learned heads answered; its
#: shared instance may have answered some in an earlier test)
OCCASIONAL_USAGE_KEYS = {"embedded": {"multilingual_judged", "gate_head", "judge_head"}}


def test_decide_gives_the_answers_with_warnings_and_usage_as_data(
    backend: Backend, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.params["backend"]
    decider = backend.decider
    assert isinstance(decider, BaseDecider)
    before = decider.usage()  # the embedded decider is a shared instance: count from here
    always = {"calls", *USAGE_KEYS[name]}
    assert always <= set(before) <= always | OCCASIONAL_USAGE_KEYS.get(name, set())
    decision = decider.decide(STATE, QUESTIONS)
    _check_shapes(decision.answers)
    answers = decider.ask(STATE, QUESTIONS)
    assert answers["gate"] == pytest.approx(decision.answers["gate"], abs=1e-6)
    assert answers["topic"].probabilities == pytest.approx(decision.answers["topic"].probabilities, abs=1e-6)
    assert decision.warnings == []
    assert set(decision.usage) == USAGE_KEYS[name]
    assert all(isinstance(v, (int, float)) and v >= 0 for v in decision.usage.values())
    usage = decider.usage()
    assert usage["calls"] - before["calls"] == 2
    for key, value in decision.usage.items():
        # the same questions twice cost the same twice
        assert usage[key] - before[key] == pytest.approx(2 * value)


def test_capabilities_are_declared(backend: Backend, request: pytest.FixtureRequest) -> None:
    name = request.node.callspec.params["backend"]
    capabilities = backend.decider.capabilities
    assert backend.decider.local is capabilities.local is (name in ("embedded", "sparrow"))
    assert capabilities.reads_wording is (name != "embedded")
    assert capabilities.uses_hints is (name == "embedded")
    assert capabilities.sends_examples is False  # no backend sends a question's examples today


def test_a_long_state_is_cut_with_a_warning(backend: Backend) -> None:
    if backend.decider.name == "embedded":
        pytest.skip(
            "the embedded decider reads any length (its embedder truncates; the policy caps the state)"
        )
    long_state = "Tell me about my tea preferences please. " * 2000  # 82,000 characters, ~16k tokens
    if backend.decider.max_state_chars is not None:  # a character limit: make it bite sooner
        backend.decider.max_state_chars = 1000
    decision = backend.decider.decide(long_state, QUESTIONS)
    _check_shapes(decision.answers)
    warnings = decision.warnings
    if backend.decider.name == "sparrow":  # no character limit: the model's token window
        assert len(warnings) == 1 and "reads at most" in warnings[0]
    else:
        assert len(warnings) == 1 and "truncated from 82000 to 1000" in warnings[0]
    if backend.server is not None:
        sent = backend.server.received[-1].body
        assert len(str(sent)) < 20_000  # the cut state went over the wire, not the whole one
    # The next call with a short state carries no stale warning.
    assert backend.decider.decide(STATE, QUESTIONS).warnings == []


def test_systemone_over_a_real_sparrow_server_agrees_with_sparrow_in_process(sparrow_url: str) -> None:
    remote = make_decider("systemone", url=sparrow_url)
    local = make_decider("sparrow")
    states = [STATE, "Hello!", "Can you review this Python function for me?", "Book me a train to Porto."]
    for state in states:
        a, b = remote.ask(state, QUESTIONS), local.ask(state, QUESTIONS)
        assert a["gate"] == pytest.approx(b["gate"], abs=0.01)
        assert a["topic"].choice == b["topic"].choice
        assert a["topic"].probabilities == pytest.approx(b["topic"].probabilities, abs=0.01)
        assert a["personal"].probabilities == pytest.approx(b["personal"].probabilities, abs=0.01)
    # And the answers depend on the state (a model that ignores its input would also agree).
    gates = {round(local.ask(s, QUESTIONS)["gate"], 3) for s in states}
    assert len(gates) > 1
    remote.close()
