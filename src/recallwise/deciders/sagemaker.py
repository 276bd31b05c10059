"""``sagemaker``: a SageMaker real-time endpoint speaking the Triton (KServe v2) envelope.

Request body (``InvokeEndpoint``, SigV4-signed by boto3)::

    {"inputs": [{"name": "REQUEST_JSON", "shape": [1, 1], "datatype": "BYTES",
                 "data": ["<the systemone request as a JSON string>"]}]}

Answer: ``{"outputs": [{"name": "RESPONSE_JSON", "datatype": "BYTES", "shape": [1, 1],
"data": ["<the systemone answer as a JSON string>"]}]}``. A request the model refuses comes
back with HTTP 200 and ``{"error": {"type", "message"}}`` (inside ``RESPONSE_JSON``, or as
the whole body); a failure inside the container arrives as botocore's ``ModelError``
carrying the container's own status in ``OriginalStatusCode``.

Install with ``pip install 'recallwise[sagemaker]'`` (boto3). Options:

- ``url`` (``--url``): ``sagemaker://ENDPOINT_NAME?region=eu-west-1`` or just the name;
  or ``endpoint_name`` (``RECALLWISE_SAGEMAKER_ENDPOINT``);
- ``region`` (``AWS_REGION`` / ``AWS_DEFAULT_REGION``), ``session`` (a ``boto3.Session``),
  ``endpoint_url`` (a VPC endpoint, or a test server), ``inference_component``;
- ``timeout`` (read timeout per socket read, default 10 s), ``connect_timeout`` (2 s),
  ``retries`` (2; only connection failures), ``pool_size`` (8), ``max_state_chars`` (16000).

botocore does the HTTP here (signing, its own error parsing), not the shared JSON client;
tests answer it in-process with a ``before-send`` event handler on :attr:`client`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlparse

from ..errors import DeciderBadResponse, DeciderError, DeciderTimeout, DeciderUnavailable, UsageError
from ..extras import require_extra
from ..http import backend_error, error_from_body, parse_json
from .base import BaseDecider, Capabilities, DecisionHints, Reply, call_if_present
from .questions import Answer, Question
from .wire import answers_from_body, systemone_request

__all__ = ["SageMakerDecider", "triton_request"]

INPUT_NAME = "REQUEST_JSON"
OUTPUT_NAME = "RESPONSE_JSON"

_UNAVAILABLE_CODES = {
    "ThrottlingException",
    "TooManyRequestsException",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "InternalFailure",
    "InternalDependencyException",
    "ModelNotReadyException",
    "AccessDeniedException",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "ExpiredTokenException",
}


def triton_request(systemone: Mapping[str, Any], input_name: str = INPUT_NAME) -> dict[str, Any]:
    """The Triton envelope around one systemone request."""
    return {
        "inputs": [
            {"name": input_name, "shape": [1, 1], "datatype": "BYTES", "data": [json.dumps(systemone)]}
        ]
    }


def _import_boto() -> tuple[Any, Any, Any]:
    require_extra("sagemaker", "the sagemaker decider")
    import boto3
    import botocore.config
    import botocore.exceptions

    return boto3, botocore.config, botocore.exceptions


class SageMakerDecider(BaseDecider):
    """A systemone model behind a SageMaker endpoint (see module docs for the options)."""

    name = "sagemaker"
    capabilities = Capabilities(local=False)

    def __init__(
        self,
        url: str | None = None,
        *,
        endpoint_name: str | None = None,
        region: str | None = None,
        session: Any = None,
        endpoint_url: str | None = None,
        inference_component: str | None = None,
        model: str | None = None,
        timeout: float = 10.0,
        connect_timeout: float = 2.0,
        retries: int = 2,
        pool_size: int = 8,
        max_state_chars: int | None = 16_000,
    ) -> None:
        boto3, config, self._exceptions = _import_boto()
        if url:
            parsed = urlparse(url)
            if parsed.scheme == "sagemaker":
                endpoint_name = endpoint_name or parsed.netloc
                query = parse_qs(parsed.query)
                region = region or next(iter(query.get("region", [])), None)
                endpoint_url = endpoint_url or next(iter(query.get("endpoint_url", [])), None)
            elif parsed.scheme:
                raise UsageError(
                    f"sagemaker: --url must be sagemaker://ENDPOINT_NAME?region=... or a name, got {url!r}"
                )
            else:
                endpoint_name = endpoint_name or url
        endpoint_name = endpoint_name or os.environ.get("RECALLWISE_SAGEMAKER_ENDPOINT")
        if not endpoint_name:
            raise UsageError(
                "the sagemaker decider needs an endpoint: --url sagemaker://NAME?region=... "
                "or RECALLWISE_SAGEMAKER_ENDPOINT"
            )
        self.endpoint_name = endpoint_name
        self.inference_component = inference_component
        self.model = model
        self.max_state_chars = max_state_chars
        self.retries = int(retries)
        session = session or boto3.Session()
        region = region or session.region_name or os.environ.get("AWS_REGION")
        if not region:
            raise UsageError("sagemaker: no AWS region: add ?region=... to the URL or set AWS_REGION")
        self.region = region
        self._client = session.client(
            "sagemaker-runtime",
            region_name=region,
            endpoint_url=endpoint_url,
            config=config.Config(
                connect_timeout=float(connect_timeout),
                read_timeout=float(timeout),
                max_pool_connections=int(pool_size),
                # Retries are ours: only for requests that never reached the endpoint.
                retries={"total_max_attempts": 1, "mode": "standard"},
            ),
        )

    @property
    def client(self) -> Any:
        """The boto3 ``sagemaker-runtime`` client (register botocore event handlers on it)."""
        return self._client

    # ---- one call ------------------------------------------------------------------------
    def _invoke(self, body: bytes) -> bytes:
        kwargs: dict[str, Any] = {
            "EndpointName": self.endpoint_name,
            "Body": body,
            "ContentType": "application/json",
            "Accept": "application/json",
        }
        if self.inference_component:
            kwargs["InferenceComponentName"] = self.inference_component
        ex = self._exceptions
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._client.invoke_endpoint(**kwargs)
                data: bytes = response["Body"].read()
                return data
            except (ex.EndpointConnectionError, ex.ConnectTimeoutError) as exc:
                if attempt <= self.retries:
                    time.sleep(0.05 * attempt)
                    continue
                raise self._error(exc) from exc
            except Exception as exc:
                raise self._error(exc) from exc

    def _error(self, exc: Exception) -> DeciderError:
        ex = self._exceptions
        where = f"sagemaker endpoint {self.endpoint_name!r} ({self.region})"
        if isinstance(exc, (ex.ConnectTimeoutError, ex.ReadTimeoutError)):
            return backend_error(
                DeciderTimeout, f"{where}: timed out: {exc}", backend_kind=type(exc).__name__
            )
        if isinstance(exc, (ex.EndpointConnectionError, ex.ConnectionClosedError)):
            return backend_error(
                DeciderUnavailable, f"{where}: cannot connect: {exc}", backend_kind=type(exc).__name__
            )
        if isinstance(exc, ex.NoCredentialsError):
            return backend_error(
                DeciderUnavailable, f"{where}: no AWS credentials", backend_kind="no_credentials"
            )
        if isinstance(exc, ex.ParamValidationError):
            return backend_error(DeciderBadResponse, f"{where}: {exc}", backend_kind="ParamValidationError")
        if isinstance(exc, ex.ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "ClientError"))
            message = str(error.get("Message", exc))
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            if code == "ModelError":
                original = exc.response.get("OriginalStatusCode")
                original_message = exc.response.get("OriginalMessage") or message
                text = f"{where}: the model container answered HTTP {original}: {original_message}"
                if isinstance(original, int) and 400 <= original < 500:
                    return backend_error(DeciderBadResponse, text, backend_kind=code, status=original)
                return backend_error(DeciderUnavailable, text, backend_kind=code, status=original)
            if code in _UNAVAILABLE_CODES or status == 429 or status >= 500:
                return backend_error(
                    DeciderUnavailable, f"{where}: {code}: {message}", backend_kind=code, status=status
                )
            if code == "ValidationError" and "not found" in message.lower():
                return backend_error(
                    DeciderUnavailable, f"{where}: {message}", backend_kind=code, status=status
                )
            return backend_error(
                DeciderBadResponse, f"{where}: {code}: {message}", backend_kind=code, status=status
            )
        return backend_error(
            DeciderUnavailable, f"{where}: {type(exc).__name__}: {exc}", backend_kind=type(exc).__name__
        )

    def _decode(self, parsed: Mapping[str, Question], data: bytes) -> dict[str, Answer]:
        """The answers in an endpoint's response body (the Triton envelope around systemone)."""
        envelope = _json(data, "the endpoint's answer")
        if isinstance(envelope, Mapping) and "error" in envelope and "outputs" not in envelope:
            raise error_from_body(self.name, 200, envelope)
        outputs = envelope.get("outputs") if isinstance(envelope, Mapping) else None
        if not isinstance(outputs, list):
            raise backend_error(
                DeciderBadResponse,
                "sagemaker: the answer has no Triton 'outputs' list",
                backend_kind="bad_envelope",
            )
        tensor = next((o for o in outputs if isinstance(o, Mapping) and o.get("name") == OUTPUT_NAME), None)
        if tensor is None:
            names = [o.get("name") for o in outputs if isinstance(o, Mapping)]
            raise backend_error(
                DeciderBadResponse,
                f"sagemaker: no {OUTPUT_NAME} tensor in the answer (outputs: {names})",
                backend_kind="bad_envelope",
            )
        values = tensor.get("data")
        while isinstance(values, list) and values and isinstance(values[0], list):
            values = values[0]  # a [1, 1] tensor may arrive nested
        if not isinstance(values, list) or not values or not isinstance(values[0], str):
            raise backend_error(
                DeciderBadResponse,
                f"sagemaker: {OUTPUT_NAME} data must hold one JSON string, got {values!r:.200}",
                backend_kind="bad_envelope",
            )
        body = _json(values[0].encode("utf-8"), OUTPUT_NAME)
        if isinstance(body, Mapping) and "error" in body and "answers" not in body:
            raise error_from_body(self.name, 200, body)
        return answers_from_body(self.name, parsed, body)

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        payload = triton_request(systemone_request(state, questions, model=self.model))
        return Reply(self._decode(questions, self._invoke(json.dumps(payload).encode("utf-8"))))

    def close(self) -> None:
        call_if_present(self._client, "close")

    def __repr__(self) -> str:
        return f"SageMakerDecider({self.endpoint_name!r}, region={self.region!r})"


def _json(data: bytes, what: str) -> Any:
    return parse_json("sagemaker", data.decode("utf-8", errors="replace"), what)
