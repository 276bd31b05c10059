"""sagemaker: boto3 with dummy keys, SigV4-signed, answered by a Triton-envelope fake.

botocore builds, validates and signs every request exactly as it would for AWS, to AWS's own
URL; a ``before-send`` event handler (botocore's ``MockTransport``) answers it in-process, and
botocore parses the answer -- errors included -- as it would AWS's. The slow-endpoint and
refused-connection tests need a real socket: ``test_http_sockets.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from recallwise.deciders import make_decider
from recallwise.deciders.sagemaker import SageMakerDecider, triton_request
from recallwise.errors import DeciderBadResponse, DeciderUnavailable, UsageError
from wire_servers import WireFake, sagemaker_fake

boto3 = pytest.importorskip("boto3", reason="boto3 comes with the dev extra (strands-agents) and [sagemaker]")

QUESTIONS = {
    "gate": {"type": "noul", "instructions": "Is this about tea?"},
    "level": {"type": "score", "instructions": "How urgent?", "criteria": ["low", "mid", "high"]},
}


def _session() -> Any:
    return boto3.Session(
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", region_name="us-east-1"
    )


def _answered_by(decider: SageMakerDecider, fake: WireFake) -> SageMakerDecider:
    decider.client.meta.events.register("before-send.sagemaker-runtime.InvokeEndpoint", fake.before_send())
    return decider


@pytest.fixture
def server() -> WireFake:
    return sagemaker_fake()


@pytest.fixture
def decider(server: WireFake) -> Iterator[SageMakerDecider]:
    d = SageMakerDecider("sagemaker://decider-endpoint?region=us-east-1", session=_session(), timeout=2.0)
    yield _answered_by(d, server)
    d.close()


def test_request_is_the_triton_envelope_signed_with_sigv4(
    decider: SageMakerDecider, server: WireFake
) -> None:
    sent_by_botocore: list[Any] = []
    decider.client.meta.events.register(
        "before-send.sagemaker-runtime.InvokeEndpoint", lambda request, **_: sent_by_botocore.append(request)
    )
    answers = decider.ask("Some tea?", QUESTIONS)
    assert set(answers) == {"gate", "level"}
    (request,) = sent_by_botocore
    assert request.headers["Authorization"].startswith(b"AWS4-HMAC-SHA256 Credential=AKIDTEST/")
    assert b"/sagemaker/aws4_request" in request.headers["Authorization"]
    assert (
        request.url
        == "https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/decider-endpoint/invocations"
    )
    received = server.received[-1]
    assert received.path == "/endpoints/decider-endpoint/invocations"
    assert received.headers["content-type"] == "application/json"
    (tensor,) = received.body["inputs"]
    assert tensor["name"] == "REQUEST_JSON" and tensor["shape"] == [1, 1] and tensor["datatype"] == "BYTES"
    inner = json.loads(tensor["data"][0])
    assert inner["state"] == "Some tea?" and set(inner["questions"]) == {"gate", "level"}


def test_botocore_validation_still_runs() -> None:
    # A parameter of the wrong type is refused by botocore's own validation, before sending.
    decider = SageMakerDecider(
        endpoint_name="x", region="us-east-1", session=_session(), endpoint_url="http://127.0.0.1:9"
    )
    decider.inference_component = 123  # type: ignore[assignment]
    with pytest.raises(DeciderBadResponse, match="Parameter validation failed") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "ParamValidationError"


def test_canned_answer_through_a_before_call_handler() -> None:
    # The AgentCore-style offline double: botocore validates the call, a handler answers it.
    import io

    decider = SageMakerDecider(endpoint_name="decider-endpoint", region="eu-west-1", session=_session())
    body = {
        "outputs": [
            {
                "name": "RESPONSE_JSON",
                "datatype": "BYTES",
                "shape": [1, 1],
                "data": [
                    json.dumps(
                        {
                            "answers": {
                                "gate": {"type": "noul", "noul": 0.7},
                                "level": {
                                    "type": "score",
                                    "score": 1.0,
                                    "probabilities": {"0": 0.2, "1": 0.6, "2": 0.2},
                                },
                            }
                        }
                    )
                ],
            }
        ]
    }
    from botocore.response import StreamingBody

    raw = json.dumps(body).encode()

    def answer(**_: Any) -> tuple[Any, dict[str, Any]]:
        http = type("R", (), {"status_code": 200, "headers": {}})()
        return http, {"Body": StreamingBody(io.BytesIO(raw), len(raw)), "ContentType": "application/json"}

    decider.client.meta.events.register("before-call.sagemaker-runtime.InvokeEndpoint", answer)
    answers = decider.ask("tea", QUESTIONS)
    assert answers["gate"] == pytest.approx(0.7)
    assert answers["level"].score == 1 and answers["level"].probabilities == [0.2, 0.6, 0.2]


def test_caller_error_arrives_as_http_200_with_an_error_body(
    decider: SageMakerDecider, server: WireFake
) -> None:
    server.fail("error_200", error_kind="invalid_request", message="score needs 2-10 levels")
    with pytest.raises(DeciderBadResponse, match="score needs 2-10 levels") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "invalid_request"


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (500, "ModelError", DeciderUnavailable),
        (422, "ModelError", DeciderBadResponse),
        (429, "ThrottlingException", DeciderUnavailable),
        (503, "ServiceUnavailable", DeciderUnavailable),
    ],
)
def test_sagemaker_errors_are_typed(
    decider: SageMakerDecider, server: WireFake, status: int, kind: str, error: type
) -> None:
    # A ModelError travels as HTTP 424 with the container's status in OriginalStatusCode.
    server.fail("status", status=status, error_kind=kind, message="container said no")
    with pytest.raises(error) as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == kind
    assert "container said no" in str(info.value)
    if kind == "ModelError":
        assert info.value.status == status


def test_unknown_endpoint_is_unavailable(server: WireFake) -> None:
    d = _answered_by(SageMakerDecider(endpoint_name="nope", region="us-east-1", session=_session()), server)
    with pytest.raises(DeciderUnavailable, match="not found") as info:
        d.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "ValidationError"


def test_truncated_json_and_missing_tensor(decider: SageMakerDecider, server: WireFake) -> None:
    server.fail("truncated_json")
    with pytest.raises(DeciderBadResponse, match="not valid JSON"):
        decider.ask("tea", QUESTIONS)
    server.fail("missing_answer")
    with pytest.raises(DeciderBadResponse, match="no answer for question"):
        decider.ask("tea", QUESTIONS)


def test_usage_counts_answered_calls(decider: SageMakerDecider, server: WireFake) -> None:
    assert decider.usage() == {"calls": 0}
    decider.ask("tea", QUESTIONS)
    server.fail("out_of_range")
    with pytest.raises(DeciderBadResponse):
        decider.ask("tea", QUESTIONS)
    assert decider.usage() == {"calls": 1}


def test_configuration_errors() -> None:
    with pytest.raises(UsageError, match="needs an endpoint"):
        SageMakerDecider(session=_session())
    with pytest.raises(UsageError, match="sagemaker://"):
        SageMakerDecider("http://example.com", session=_session())
    no_region = boto3.Session(aws_access_key_id="a", aws_secret_access_key="b")
    if no_region.region_name is None:
        with pytest.raises(UsageError, match="region"):
            SageMakerDecider("ep", session=no_region)
    assert (
        make_decider("sagemaker", url="sagemaker://ep?region=eu-west-1", session=_session()).region
        == "eu-west-1"
    )


def test_triton_request_shape() -> None:
    body = triton_request({"state": "s", "questions": {}})
    assert body["inputs"][0]["data"] == [json.dumps({"state": "s", "questions": {}})]
