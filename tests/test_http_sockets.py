"""What only a real socket shows: deadlines, slow bodies, retries, dropped connections, refusals.

Every other wire test answers in-process (``httpx.MockTransport``, botocore ``before-send``);
these put the same fakes (``wire_servers``) on a loopback port, so httpx's and botocore's own
connection handling -- the exact exceptions a dropped or cut connection raises, which the
retry rule depends on -- is what is tested.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from recallwise.bench.serve import free_port  # nothing listens on it: connections are refused
from recallwise.deciders.llm import LLMDecider
from recallwise.deciders.openrouter import OpenRouterDecider
from recallwise.deciders.systemone import SystemOneDecider
from recallwise.errors import DeciderTimeout, DeciderUnavailable
from recallwise.extraction import ExtractionError, OpenAIChat
from wire_servers import WireFake, llm_fake, openrouter_fake, sagemaker_fake, serve_socket, systemone_fake

QUESTIONS = {
    "gate": {"type": "noul", "instructions": "Is this about tea?"},
    "topic": {"type": "choice", "instructions": "Topic?", "criteria": {"tea": "", "code": ""}},
}


@pytest.fixture(scope="module")
def s1_server() -> Iterator[WireFake]:
    with serve_socket(systemone_fake()) as server:
        yield server


@pytest.fixture
def s1(s1_server: WireFake) -> Iterator[SystemOneDecider]:
    s1_server.heal()
    decider = SystemOneDecider(s1_server.url, timeout=2.0, retries=2)
    yield decider
    decider.close()
    s1_server.heal()


# ---- deadlines ---------------------------------------------------------------------------


def test_slow_server_times_out_within_the_total_timeout(s1_server: WireFake) -> None:
    s1_server.fail("slow", seconds=1.5)
    with (
        SystemOneDecider(s1_server.url, timeout=0.3) as decider,
        pytest.raises(DeciderTimeout, match="timed out waiting for the answer") as info,
    ):
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "ReadTimeout"
    s1_server.heal()


def test_a_body_dripping_in_is_cut_off_at_the_total_deadline(s1_server: WireFake) -> None:
    # Every byte arrives well within the per-read timeout; only the total deadline stops it.
    s1_server.fail("drip", seconds=0.05)
    with (
        SystemOneDecider(s1_server.url, timeout=0.5, retries=0) as decider,
        pytest.raises(DeciderTimeout, match="timed out waiting for the answer"),
    ):
        decider.ask("tea", QUESTIONS)
    s1_server.heal()


def test_llm_slow_server_times_out() -> None:
    with serve_socket(llm_fake()) as server:
        server.fail("slow", seconds=1.5)
        slow = LLMDecider(server.url, model="fake", timeout=0.3)
        with pytest.raises(DeciderTimeout):
            slow.ask("drink", {"gate": QUESTIONS["gate"]})
        slow.close()


# ---- what is retried, what is not --------------------------------------------------------


def test_a_body_cut_short_is_a_transport_error_not_retried(s1: SystemOneDecider, s1_server: WireFake) -> None:
    s1_server.fail("cut")
    before = s1_server.count
    with pytest.raises(DeciderUnavailable, match="transport error") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "RemoteProtocolError"
    assert s1_server.count - before == 1


def test_dropped_connection_is_retried_once_for_a_free_backend(
    s1: SystemOneDecider, s1_server: WireFake
) -> None:
    s1_server.fail("drop", times=1)
    before = s1_server.count
    answers = s1.ask("tea", QUESTIONS)
    assert set(answers) == set(QUESTIONS)
    assert s1_server.count - before == 2


def test_retries_are_bounded(s1_server: WireFake) -> None:
    s1_server.fail("drop")
    before = s1_server.count
    with SystemOneDecider(s1_server.url, retries=2) as decider, pytest.raises(DeciderUnavailable):
        decider.ask("tea", QUESTIONS)
    assert s1_server.count - before == 3  # one try and two retries
    s1_server.heal()


def test_openrouter_does_not_resend_a_request_the_server_may_have_billed() -> None:
    with serve_socket(openrouter_fake("sk-or-test")) as server:
        server.fail("drop", times=1)
        decider = OpenRouterDecider(server.url + "/api/alpha/decisions", api_key="sk-or-test")
        with pytest.raises(DeciderUnavailable):
            decider.ask("tea", QUESTIONS)
        assert server.count == 1
        decider.close()


def test_the_extractor_does_not_resend_a_request_either() -> None:
    with serve_socket(llm_fake()) as server:
        server.fail("drop", times=1)
        chat = OpenAIChat("tiny", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ExtractionError, match="transport error"):
            chat.complete("system", "user")
        assert server.count == 1
        chat.close()


def test_connection_refused_is_unavailable() -> None:
    decider = SystemOneDecider(f"http://127.0.0.1:{free_port()}", retries=1)
    with pytest.raises(DeciderUnavailable, match="cannot connect") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "connect_error"


def test_the_extractor_names_a_refused_connection() -> None:
    chat = OpenAIChat("tiny", base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ExtractionError, match=r"cannot connect to http://127\.0\.0\.1") as info:
        chat.complete("system", "user")
    assert info.value.backend_kind == "connect_error"  # type: ignore[attr-defined]


# ---- SageMaker: botocore's own sockets -----------------------------------------------------


def _sagemaker_session() -> Any:
    boto3 = pytest.importorskip("boto3", reason="boto3 comes with the dev extra and [sagemaker]")
    return boto3.Session(
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", region_name="us-east-1"
    )


def test_sagemaker_slow_endpoint_times_out() -> None:
    from recallwise.deciders.sagemaker import SageMakerDecider

    session = _sagemaker_session()
    with serve_socket(sagemaker_fake()) as server:
        server.fail("slow", seconds=1.5)
        d = SageMakerDecider(
            endpoint_name="decider-endpoint",
            region="us-east-1",
            session=session,
            endpoint_url=server.url,
            timeout=0.3,
        )
        with pytest.raises(DeciderTimeout, match="timed out"):
            d.ask("tea", QUESTIONS)
        server.heal()
        assert set(d.ask("tea", QUESTIONS)) == set(QUESTIONS)  # the same endpoint, answering
        d.close()


def test_sagemaker_connection_refused_is_unavailable() -> None:
    from recallwise.deciders.sagemaker import SageMakerDecider

    d = SageMakerDecider(
        endpoint_name="e",
        region="us-east-1",
        session=_sagemaker_session(),
        endpoint_url=f"http://127.0.0.1:{free_port()}",
        retries=1,
    )
    with pytest.raises(DeciderUnavailable, match="cannot connect"):
        d.ask("tea", QUESTIONS)
