"""One contract, every backend that can run here.

Real peers where they exist (the embedded decider, sparrow-decider in-process, and the
``systemone`` backend against a real ``sparrow-decider serve`` on loopback); local servers
speaking the documented wire formats for OpenRouter, SageMaker and OpenAI-compatible LLMs.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from recallgate.deciders import ChoiceAnswer, Question, ScoreAnswer, make_decider
from recallgate.deciders import ask as policy_ask
from recallgate.deciders.wire import normalise_answers
from recallgate.errors import QuestionError
from wire_servers import (
    WireServer,
    fake_answers,
    llm_server,
    openrouter_server,
    sagemaker_server,
    sparrow_serve,
    systemone_server,
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


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, WireServer]]:
    with (
        systemone_server() as s1,
        openrouter_server("sk-or-test") as orr,
        sagemaker_server() as sm,
        llm_server() as llm,
    ):
        yield {
            "systemone-wire": s1,
            "openrouter": orr,
            "sagemaker": sm,
            "llm-chat": llm,
            "llm-completions": llm,
        }


@dataclass
class Backend:
    decider: Any
    server: WireServer | None
    #: requests one ask() makes for len(QUESTIONS) questions (None: no server to count)
    requests_per_call: int | None
    #: answers come from wire_servers.fake_answers (so they are known exactly)
    fake: bool


def _sagemaker(server: WireServer) -> Any:
    boto3 = pytest.importorskip("boto3", reason="boto3 comes with the dev extra (strands-agents)")
    session = boto3.Session(
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", region_name="us-east-1"
    )
    return make_decider(
        "sagemaker",
        url="sagemaker://decider-endpoint?region=us-east-1",
        session=session,
        endpoint_url=server.url,
    )


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
def backend(request: pytest.FixtureRequest, servers: dict[str, WireServer]) -> Iterator[Backend]:
    name = request.param
    server = servers.get(name)
    if server is not None:
        server.heal()
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
    if name == "systemone-wire":
        decider = make_decider("systemone", url=server.url)
        per_call = 1
    elif name == "openrouter":
        decider = make_decider("openrouter", url=server.url + "/api/alpha/decisions", api_key="sk-or-test")
        per_call = 1
    elif name == "sagemaker":
        decider = _sagemaker(server)
        per_call = 1
    elif name == "llm-chat":
        decider = make_decider("llm", url=server.url + "/v1", model="fake")
        per_call = len(QUESTIONS)  # chat takes one prompt per request: one per question, concurrently
    else:
        decider = make_decider("llm", url=server.url, model="fake", mode="completions")
        per_call = 1
    yield Backend(decider, server, per_call, True)
    close = getattr(decider, "close", None)
    if callable(close):
        close()


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


BAD_REQUESTS = [
    ("", {"q": {"type": "noul", "instructions": "x"}}, "state is empty"),
    ("   ", {"q": {"type": "noul", "instructions": "x"}}, "state is empty"),
    ("state", {}, "no questions"),
    ("state", {f"q{i}": {"type": "noul", "instructions": "x"} for i in range(65)}, "65 questions"),
    ("state", {"one": {"type": "choice", "instructions": "x", "criteria": {"a": ""}}}, "'one'"),
    (
        "state",
        {"many": {"type": "choice", "instructions": "x", "criteria": {str(i): "" for i in range(256)}}},
        "'many'",
    ),
    (
        "state",
        {"deep": {"type": "score", "instructions": "x", "criteria": [str(i) for i in range(11)]}},
        "'deep'",
    ),
    ("state", {"odd": {"type": "ranking", "instructions": "x"}}, "'odd'"),
    (
        "state",
        {"crit": {"type": "noul", "instructions": "x", "criteria": {"true": 1, "false": "no"}}},
        "'crit'",
    ),
]


@pytest.mark.parametrize(("state", "questions", "named"), BAD_REQUESTS)
def test_bad_requests_are_refused_before_any_network_call(
    backend: Backend, state: str, questions: dict[str, Any], named: str
) -> None:
    before = backend.server.count if backend.server else 0
    with pytest.raises(QuestionError, match=named):
        backend.decider.ask(state, questions)
    if backend.server is not None:
        assert backend.server.count == before


def test_async_twin_gives_the_same_answers(backend: Backend) -> None:
    aask = getattr(backend.decider, "aask", None)
    if aask is None:
        assert backend.decider.name == "embedded"  # the only backend without one (it never waits)
        return
    sync = backend.decider.ask(STATE, QUESTIONS)

    async def run() -> Any:
        try:
            return await aask(STATE, QUESTIONS)
        finally:
            aclose = getattr(backend.decider, "aclose", None)
            if aclose is not None:
                await aclose()

    got = asyncio.run(run())
    assert got["gate"] == pytest.approx(sync["gate"], abs=1e-6)
    assert got["topic"].probabilities == pytest.approx(sync["topic"].probabilities, abs=1e-6)
    assert got["personal"].probabilities == pytest.approx(sync["personal"].probabilities, abs=1e-6)


def test_a_long_state_is_cut_with_a_warning(backend: Backend) -> None:
    if backend.decider.name == "embedded":
        pytest.skip(
            "the embedded decider reads any length (its embedder truncates; the policy caps the state)"
        )
    long_state = "Tell me about my tea preferences please. " * 2000  # 84,000 characters, ~16k tokens
    if hasattr(backend.decider, "max_state_chars"):
        backend.decider.max_state_chars = 1000
    answers = backend.decider.ask(long_state, QUESTIONS)
    _check_shapes(answers)
    warnings = backend.decider.last_warnings
    assert warnings and ("truncated" in warnings[0] or "reads at most" in warnings[0])
    if backend.server is not None:
        sent = backend.server.received[-1].body
        assert len(str(sent)) < 20_000  # the cut state went over the wire, not the whole one
    # The next call with a short state carries no stale warning.
    backend.decider.ask(STATE, QUESTIONS)
    assert backend.decider.last_warnings == []


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
